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
import Testing

/// A ``SyncServer`` on 127.0.0.1 (port chosen by the system) over a temporary data directory,
/// with a manual clock, and clients in their own directories.
final class ServerFixture: @unchecked Sendable {
    static let adminToken = "admin-token"
    static let notesToken = "notes-token"
    static let tokenFile = """
        # tokens for the tests
        \(adminToken)   *
        \(notesToken)   notes   # only the notes store
        """

    let directory = TemporaryDirectory(prefix: "syncserver-test")
    let clock = ManualClock()
    let limits: SyncLimits
    private(set) var running: RunningServer?
    private var clients: [Store] = []

    var dataDirectory: String { directory.appending("data") }
    /// The URL of the running server (or of the last one, once stopped).
    private(set) var baseURL = ""


    init(limits: SyncLimits = SyncLimits()) async throws {
        self.limits = limits
        try await start()
    }

    var configuration: SyncServer.Configuration {
        get throws {
            let tokensPath = directory.appending("tokens")
            try ServerFixture.tokenFile.write(toFile: tokensPath, atomically: true, encoding: .utf8)
            var configuration = try SyncServer.Configuration(
                dataDirectory: dataDirectory, port: 0, tokensFile: tokensPath)
            configuration.limits = limits
            configuration.storeConfiguration.durability = .relaxed
            configuration.storeConfiguration.physicalClock = clock.function
            configuration.logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            return configuration
        }
    }

    func start() async throws {
        let server = try await RunningServer(try configuration)
        running = server
        baseURL = server.baseURL
    }

    func stop() async throws {
        try await running?.stop()
        running = nil
    }

    func client(_ name: String, skew: Int64 = 0) throws -> Store {
        let clientClock = ManualClock(start: UInt64(Int64(clock.now) + skew))
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        configuration.physicalClock = clientClock.function
        let store = try Store.open(at: directory.appending("client-\(name)"), configuration: configuration)
        clients.append(store)
        return store
    }

    func synchronizer(_ store: Store, storeName: String = "notes", token: String = ServerFixture.notesToken) -> Synchronizer {
        Synchronizer(
            store: store, transport: HTTPTransport(baseURL: baseURL, token: token, storeName: storeName), remoteName: "server")
    }

    func close() async {
        try? await stop()
        for store in clients { store.close() }
        directory.remove()
    }

    // MARK: Raw HTTP

    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]

        var text: String { String(decoding: body, as: UTF8.self) }

        /// The problem's `code` and `detail`, when the body is a problem.
        var problem: (code: String, detail: String)? {
            guard case .object(let members)? = try? Value(json: body),
                case .string(let code)? = members["code"], case .string(let detail)? = members["detail"]
            else { return nil }
            return (code, detail)
        }
    }

    func send(
        _ method: HTTPMethod, _ path: String, token: String? = ServerFixture.adminToken, body: [UInt8]? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Array(buffer.readableBytesView))
    }

    /// The server's head and digest of a store (via the API), or `nil` when it does not exist.
    func state(of store: String) async throws -> String? {
        let reply = try await send(.GET, "/v1/stores/\(store)")
        guard reply.status == 200 else { return nil }
        let info = try RemoteInfo(json: reply.body)
        return "\(info.head)/\(info.digest)/\(info.epoch)"
    }
}

/// A ``SyncServer`` run in a service group until ``stop()`` (graceful shutdown).
final class RunningServer: Sendable {
    let server: SyncServer
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(_ configuration: SyncServer.Configuration) async throws {
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
}

/// Runs `body` with a fresh fixture, then closes it.
func withServer(limits: SyncLimits = SyncLimits(), _ body: (ServerFixture) async throws -> Void) async throws {
    let fixture = try await ServerFixture(limits: limits)
    do {
        try await body(fixture)
    } catch {
        await fixture.close()
        throw error
    }
    await fixture.close()
}

/// The events of a store, in log order.
func events(of store: Store) throws -> [Event] {
    try store.read { reader in
        var events: [Event] = []
        try reader.forEachEvent { events.append($0); return true }
        return events
    }
}

/// A push body holding `events`.
func pushBody(_ events: [Event], replica: ReplicaID) -> [UInt8] {
    PushRequest(replica: replica, events: events).jsonBytes()
}
