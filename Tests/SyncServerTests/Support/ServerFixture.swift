import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Logging
import NIOHTTP1
import SyncServer
import SyncTestSupport
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
    /// Changes the configuration further (TLS, metrics).
    let configure: @Sendable (inout SyncServer.Configuration) -> Void
    private(set) var running: RunningServer?
    private var clients: [Store] = []

    var dataDirectory: String { directory.appending("data") }
    /// The URL of the running server (or of the last one, once stopped).
    private(set) var baseURL = ""

    init(
        limits: SyncLimits = SyncLimits(),
        configure: @escaping @Sendable (inout SyncServer.Configuration) -> Void = { _ in }
    ) async throws {
        self.limits = limits
        self.configure = configure
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
            configure(&configuration)
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

    func synchronizer(_ store: Store, storeName: String = "notes", token: String = ServerFixture.notesToken)
        -> Synchronizer
    {
        Synchronizer(
            store: store, transport: HTTPTransport(baseURL: baseURL, token: token, storeName: storeName),
            remoteName: "server")
    }

    func close() async {
        try? await stop()
        for store in clients { store.close() }
        directory.remove()
    }

    // MARK: Raw HTTP

    typealias Reply = RunningServer.Reply

    func send(
        _ method: HTTPMethod, _ path: String, token: String? = ServerFixture.adminToken, body: [UInt8]? = nil,
        headers: [(String, String)] = [], timeout: Duration = .seconds(120)
    ) async throws -> Reply {
        // The bound only catches a hang: in the full parallel suite on two cores, two of these
        // tests once waited together for over 30 s while passing alone in a second.
        try await RunningServer.send(
            to: baseURL, method, path, token: token, body: body, headers: headers, timeout: timeout)
    }

    /// The server's head and digest of a store (via the API), or `nil` when it does not exist.
    func state(of store: String) async throws -> String? {
        let reply = try await send(.GET, "/v1/stores/\(store)")
        guard reply.status == 200 else { return nil }
        let info = try RemoteInfo(json: reply.body)
        return "\(info.head)/\(info.digest)/\(info.epoch)"
    }
}

/// Runs `body` with a fresh fixture, then closes it.
func withServer(
    limits: SyncLimits = SyncLimits(),
    configure: @escaping @Sendable (inout SyncServer.Configuration) -> Void = { _ in },
    _ body: (ServerFixture) async throws -> Void
) async throws {
    let fixture = try await ServerFixture(limits: limits, configure: configure)
    do {
        try await body(fixture)
    } catch {
        await fixture.close()
        throw error
    }
    await fixture.close()
}

/// A push body holding `events`.
func pushBody(_ events: [Event], replica: ReplicaID) -> [UInt8] {
    PushRequest(replica: replica, events: events).jsonBytes()
}
