import EventStore
import EventStoreTestSupport
import EventSync
import Logging
import NIOHTTP1
import SyncServer
import SyncTestSupport

/// A ``SyncServer`` on 127.0.0.1 (port chosen by the system) with three tokens: admin (every
/// store), notes (only `notes`), other (only `other`).
final class ServerHarness: Sendable {
    static let adminToken = "admin-token"
    static let notesToken = "notes-token"
    static let otherToken = "other-token"

    let running: RunningServer

    var port: Int { running.port }
    var baseURL: String { running.baseURL }

    /// Starts a server whose stores are LMDB stores in `dataDirectory`, or in a new PostgreSQL
    /// database with `backend` `.postgres`.
    init(
        dataDirectory: String, backend: TestBackend = .lmdb, limits: SyncLimits = SyncLimits(),
        clock: (@Sendable () -> UInt64)? = nil,
        idleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(60),
        writeTimeout: Duration = .seconds(30),
        logger: Logger? = nil
    ) async throws {
        let tokens = try TokenTable(
            parsing: """
                \(ServerHarness.adminToken) *
                \(ServerHarness.notesToken) notes
                \(ServerHarness.otherToken) other
                """)
        var configuration = SyncServer.Configuration(
            backend: try await backend.make(dataDirectory: dataDirectory), port: 0, tokens: tokens)
        configuration.limits = limits
        configuration.idleTimeout = idleTimeout
        configuration.bodyTimeout = bodyTimeout
        configuration.writeTimeout = writeTimeout
        configuration.storeConfiguration.durability = .relaxed
        if let clock { configuration.storeConfiguration.physicalClock = clock }
        running = try await RunningServer(configuration, logger: logger)
    }

    func stop() async throws { try await running.stop() }

    typealias Reply = RunningServer.Reply

    /// One HTTP request with `Authorization: Bearer token`.
    func send(
        _ method: HTTPMethod, _ path: String, token: String? = ServerHarness.adminToken, body: [UInt8]? = nil,
        contentType: String? = "application/json", timeout: Duration = .seconds(60)
    ) async throws -> Reply {
        try await running.send(method, path, token: token, body: body, contentType: contentType, timeout: timeout)
    }

    /// The head of `store` via `GET /v1/stores/{store}` (0 when it does not exist).
    func head(of store: String) async throws -> UInt64 {
        let reply = try await send(.GET, "/v1/stores/\(store)")
        guard reply.status == 200 else { return 0 }
        return try RemoteInfo(json: reply.body).head
    }
}

/// Opens the store at `path`, runs `body`, closes it.
func withStore<T>(
    at path: String, configuration: Store.Configuration = Store.Configuration(), _ body: (Store) throws -> T
) throws -> T {
    let store = try Store.open(at: path, configuration: configuration)
    defer { store.close() }
    return try body(store)
}
