import AsyncHTTPClient
import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SyncServer

/// A ``SyncServer`` on 127.0.0.1, port chosen by the system, run until ``stop()``.
final class ServerHarness: Sendable {
    static let adminToken = "admin-token"
    static let notesToken = "notes-token"
    static let otherToken = "other-token"

    let server: SyncServer
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a server over `dataDirectory`; tokens: admin (every store), notes (only `notes`),
    /// other (only `other`).
    init(
        dataDirectory: String, limits: SyncLimits = SyncLimits(), clock: (@Sendable () -> UInt64)? = nil,
        idleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(60)
    ) async throws {
        let tokens = try TokenTable(parsing: """
            \(ServerHarness.adminToken) *
            \(ServerHarness.notesToken) notes
            \(ServerHarness.otherToken) other
            """)
        var configuration = SyncServer.Configuration(dataDirectory: dataDirectory, port: 0, tokens: tokens)
        configuration.limits = limits
        configuration.idleTimeout = idleTimeout
        configuration.bodyTimeout = bodyTimeout
        configuration.storeConfiguration.durability = .relaxed
        if let clock { configuration.storeConfiguration.physicalClock = clock }
        configuration.logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let group = ServiceGroup(services: [server], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        self.server = server
        self.group = group
        self.task = Task { try await group.run() }
        self.port = try await server.waitUntilRunning()
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    struct Reply: Sendable {
        var status: Int
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// One HTTP request with `Authorization: Bearer token`.
    func send(
        _ method: HTTPMethod, _ path: String, token: String? = ServerHarness.adminToken, body: [UInt8]? = nil,
        contentType: String? = "application/json", timeout: Duration = .seconds(20)
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout.components.seconds))
        let buffer = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), body: Array(buffer.readableBytesView))
    }

    /// The head of `store` via `GET /v1/stores/{store}` (0 when it does not exist).
    func head(of store: String) async throws -> UInt64 {
        let reply = try await send(.GET, "/v1/stores/\(store)")
        guard reply.status == 200 else { return 0 }
        return try RemoteInfo(json: reply.body).head
    }
}

/// Every item (fields and version) of a store as canonical text, plus search results: what two
/// copies of the same log must agree on.
struct StoreSnapshot: Equatable, CustomStringConvertible {
    var items: [String] = []
    var search: [String] = []

    static let queries: [SearchQuery] = [
        SearchQuery("alpha"), SearchQuery("be"), SearchQuery("gamma delta"), SearchQuery("동기화"),
        SearchQuery("sync", limit: 5), SearchQuery("kiwi ledger"),
    ]

    init(_ store: Store) throws {
        try store.read { reader in
            for collection in try reader.collections() {
                var page = try reader.items(in: collection, limit: 1000)
                while true {
                    for item in page.items {
                        let fields = String(decoding: Value.object(item.fields).jsonBytes(), as: UTF8.self)
                        items.append("\(collection)/\(item.id)@\(item.version.rawValue) \(fields)")
                    }
                    guard let next = page.next else { break }
                    page = try reader.items(in: collection, after: next, limit: 1000)
                }
            }
            for query in StoreSnapshot.queries {
                let results = try reader.search(query)
                search.append(
                    "\(query.text): " + results.map { "\($0.item.collection)/\($0.item.id)=\($0.score)" }.joined(separator: ","))
            }
        }
    }

    var description: String { (items + search).joined(separator: "\n") }
}

/// The events of a store, in log order.
func allEvents(of store: Store) throws -> [Event] {
    try store.read { reader in
        var events: [Event] = []
        try reader.forEachEvent { events.append($0); return true }
        return events
    }
}

/// Opens the store at `path`, runs `body`, closes it.
func withStore<T>(at path: String, configuration: Store.Configuration = Store.Configuration(), _ body: (Store) throws -> T) throws -> T {
    let store = try Store.open(at: path, configuration: configuration)
    defer { store.close() }
    return try body(store)
}
