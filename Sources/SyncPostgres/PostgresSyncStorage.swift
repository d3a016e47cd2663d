import EventStore
import EventSync
import EventSyncService
import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// The PostgreSQL backend (see <doc:SyncPostgres> for the tables and the guarantees).
///
/// A push runs in one transaction that first locks its store's row: pushes to one store are
/// serialised across every process, each reads the head its predecessor committed, so seqs are
/// dense, and a pull that sees seq N+1 also sees N (N committed before N+1's transaction could
/// take the lock). The push logic is ``EventSyncService/SyncLedger/apply(_:)``, shared with the
/// LMDB backend, on a ``PostgresLedger``. The pushes that wait for one store on this instance
/// share a transaction (``PushBatcher``).
final class PostgresSyncStorage: SyncStorage {
    let client: PostgresClient
    private let configuration: SyncService.Configuration
    private let signals = CommitSignals()
    /// Gathers the pushes waiting for a store into one transaction.
    let batcher: PushBatcher
    /// A store's head as the live pulls woken at one commit signal read it.
    struct HeadKey: Hashable, Sendable {
        var store: String
        var generation: UInt64
    }
    /// A page as the live pulls woken at one commit signal read it.
    struct PageKey: Hashable, Sendable {
        var store: String
        var generation: UInt64
        var after: UInt64
        var limit: Int
        var maxBytes: Int
        var keepsEvents: Bool
    }
    /// The reads of the head that waiting live pulls share.
    let sharedHeads = SharedReads<HeadKey, UInt64>()
    /// The reads of a page that live pulls woken together share.
    let sharedPages = SharedReads<PageKey, EncodedPage>()
    /// How large each store's events were in the pages read lately: a page read asks for about
    /// as many as fit.
    let pageSizes = PageSizeEstimates()
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// Creates the tables, once.
    private let prepared = Mutex<Task<Void, any Error>?>(nil)
    /// Whether the tables were created (``ready()`` succeeded once).
    private let preparedOnce = Atomic(false)
    private let closed = Atomic(false)
    /// The schema of the tables, if not the default.
    private let schema: String?
    /// The channel pushes notify (see ``PostgresSchema/channel(schema:)``).
    let channel: String
    /// How long a request waits for the database.
    private let requestTimeout: Duration

    /// How often a waiting pull reads the head while the `LISTEN` connection is down.
    static let pollInterval: Duration = .milliseconds(500)

    /// This database's place in its deployment.
    private let partition: PostgresPartition

    init(backend: PostgresBackend, partition: PostgresPartition = .whole, configuration: SyncService.Configuration) {
        self.configuration = configuration
        self.partition = partition
        schema = backend.schema
        channel = PostgresSchema.channel(schema: backend.schema)
        requestTimeout = backend.requestTimeout
        // A push waits for the transactions ahead of it (each bounded by the request timeout)
        // for at most three of them.
        batcher = PushBatcher(maxWait: backend.requestTimeout * 3)
        var clientConfiguration = PostgresClient.Configuration(
            host: backend.host, port: backend.port, username: backend.username, password: backend.password,
            database: backend.database, tls: PostgresSyncStorage.tls(backend.tls))
        clientConfiguration.options.maximumConnections = max(backend.maxConnections, 2)
        clientConfiguration.options.connectTimeout = .seconds(5)
        if let schema = backend.schema {
            clientConfiguration.options.additionalStartupParameters = [("search_path", schema)]
        }
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: configuration.logger)
        let client = client
        let signals = signals
        let channel = channel
        let logger = configuration.logger
        tasks.withLock { tasks in
            tasks.append(Task { await client.run() })
            tasks.append(
                Task { await PostgresSyncStorage.listen(client, on: channel, signals: signals, logger: logger) })
        }
    }

    private static func tls(_ mode: PostgresBackend.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    func close() {
        closed.store(true, ordering: .releasing)
        let running = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        signals.signalAll()
    }

    /// Creates the tables once (every request waits for it; a failure is retried by the next request).
    func ready() async throws {
        guard !closed.load(ordering: .acquiring) else { throw SyncError(.unavailable, "the sync service is closed") }
        let task = prepared.withLock { prepared in
            if let prepared { return prepared }
            let client = client
            let schema = schema
            let logger = configuration.logger
            let partition = partition
            let task = Task {
                try await PostgresSchema.prepare(client, schema: schema, partition: partition, logger: logger)
            }
            prepared = task
            return task
        }
        do {
            try await task.value
            preparedOnce.store(true, ordering: .releasing)
        } catch {
            prepared.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }

    /// ``ready()`` within the request timeout: a database that does not answer makes it
    /// ``EventSync/SyncError/Code/unavailable`` then, as every request of this storage is.
    func readyInTime() async throws {
        guard !isPrepared else { return }
        try await mapped { [self] in try await ready() }
    }

    /// Whether ``ready()`` succeeded.
    var isPrepared: Bool { preparedOnce.load(ordering: .acquiring) }

    // MARK: Listening

    /// Keeps a connection listening on ``PostgresSchema/channel`` until cancelled, reconnecting
    /// after a failure; signals every store after each (re)connection, since notifications sent
    /// while it was down are lost.
    private static func listen(
        _ client: PostgresClient, on channel: String, signals: CommitSignals, logger: Logger
    ) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        signals.setListening(true)
                        signals.signalAll()
                        for try await notification in notifications { signals.signal(notification.payload) }
                    }
                }
            } catch {
                if !Task.isCancelled {
                    logger.warning(
                        "LISTEN connection lost; live pulls poll until it is back", metadata: ["error": "\(error)"])
                }
            }
            signals.setListening(false)
            try? await Task.sleep(for: .seconds(1))
        }
    }

    // MARK: Requests

    func info(_ name: String, check: ContinuityCheck?, replica: ReplicaID?, logger: Logger) async throws -> RemoteInfo {
        try await mapped { [self] in
            try await ready()
            let state = try await verifyContinuity(name, check: check, logger: logger)
            var highWater: UInt64?
            if let replica {
                highWater = 0
                let rows = try await client.query(
                    "SELECT high_water FROM evstore_replicas WHERE store = \(name) AND replica = \(replica.description)",
                    logger: logger)
                for try await value in rows.decode(Int64.self) { highWater = UInt64(bitPattern: value) }
            }
            return RemoteInfo(
                store: name, head: state.head, epoch: state.epoch, digest: state.headDigest,
                limits: configuration.limits, replicaHighWater: highWater, signature: state.headSignature)
        }
    }

    func push(_ name: String, _ push: CheckedPush, create: Bool, logger: Logger) async throws -> PushOutcome {
        try await batcher.submit(push, to: PushBatcher.Key(store: name, create: create)) { [self] pushes in
            await apply(pushes, to: name, create: create, logger: logger)
        }
    }

    /// Applies a batch of pushes to a store in one transaction (see ``PushBatcher``): a result
    /// per push; a failure of the transaction is every push's.
    private func apply(_ pushes: [CheckedPush], to name: String, create: Bool, logger: Logger) async
        -> [Result<PushOutcome, SyncError>]
    {
        do {
            let (results, appended) = try await mapped { [self] in
                try await ready()
                return try await client.withTransaction(logger: logger) { connection in
                    try await PostgresSyncStorage.push(
                        name, pushes, create: create, channel: channel, on: connection, logger: logger)
                }
            }
            if appended { signals.signal(name) }
            return results
        } catch {
            return Array(repeating: .failure(PostgresSyncStorage.syncError(error)), count: pushes.count)
        }
    }

    func page(_ name: String, _ request: PageRequest, logger: Logger) async throws -> EncodedPage {
        try await mapped(waiting: request.wait) { [self] in
            try await ready()
            let state = try await verifyContinuity(name, check: request.check, logger: logger)
            if request.wait > .zero, state.head <= request.after {
                // Each round reads the head once, after noting the signal generation, so that a
                // push committed between the read and the wait is never missed.
                let deadline = ContinuousClock.now + request.wait
                // The pulls a commit wakes share their reads of the head and of the page (the
                // same page after the same seq): keyed by the generation they woke at.
                while !Task.isCancelled, !closed.load(ordering: .acquiring), !request.liveWaits.areEnded {
                    let now = ContinuousClock.now
                    guard now < deadline else { break }
                    var slice = deadline - now
                    if !signals.isListening { slice = min(slice, PostgresSyncStorage.pollInterval) }
                    let seen = signals.generation(of: name)
                    let head = try await sharedHeads.value(for: HeadKey(store: name, generation: seen)) { [self] in
                        try await storeState(name, logger: logger).head
                    }
                    guard head <= request.after else {
                        let key = PageKey(
                            store: name, generation: seen, after: request.after, limit: request.limit,
                            maxBytes: request.maxBytes, keepsEvents: request.keepsEvents)
                        return try await sharedPages.value(for: key) { [self] in
                            try await readPage(name, request, logger: logger)
                        }
                    }
                    await signals.wait(for: name, after: seen, upTo: slice, liveWaits: request.liveWaits)
                }
            }
            return try await readPage(name, request, logger: logger)
        }
    }

    func storeNames() async throws -> [String] {
        try await mapped { [self] in
            try await ready()
            let rows = try await client.query(
                "SELECT name FROM evstore_stores ORDER BY name COLLATE \"C\"", logger: configuration.logger)
            var names: [String] = []
            for try await name in rows.decode(String.self) { names.append(name) }
            return names
        }
    }

    /// Runs `body` within the request timeout (plus `waiting`), mapping the database's errors to
    /// ``EventSync/SyncError``s: a database that is down or unreachable must not hold clients'
    /// requests until their own timeouts.
    ///
    /// The answer comes at the timeout even when `body` does not end then (a connection attempt
    /// or the shared table set-up does not stop when cancelled): `body` is cancelled and left to
    /// finish on its own. A push answered so may still commit; the client's retry finds it.
    private func mapped<T: Sendable>(waiting: Duration = .zero, _ body: @escaping @Sendable () async throws -> T)
        async throws -> T
    {
        let limit = requestTimeout + waiting
        do {
            return try await Deadline.race(limit, body) {
                SyncError(.unavailable, "the database did not answer within \(limit.components.seconds) s")
            }
        } catch {
            throw PostgresSyncStorage.syncError(error)
        }
    }
}
