import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import PostgresNIO
import SyncPostgres
import SyncTestSupport

/// The server of a sync simulation run, on either backend, with what the simulation does to it:
/// stop it and copy its storage aside (a backup), later put that copy back (a restore from an
/// older backup), and read its log.
final class SimulatedServer: @unchecked Sendable {
    let kind: TestBackend
    private let path: String
    private let backupPath: String
    private let clock: ManualClock
    private let backend: SyncBackend
    private let database: PostgresBackend?
    private(set) var service: SyncService

    init(_ kind: TestBackend, directory: TemporaryDirectory, clock: ManualClock) async throws {
        self.kind = kind
        self.clock = clock
        path = directory.appending("server")
        backupPath = directory.appending("backup")
        switch kind {
        case .lmdb:
            database = nil
            backend = .lmdb(dataDirectory: path)
        case .postgres:
            let database = try await TestPostgres.freshDatabase()
            self.database = database
            backend = .postgres(database)
        }
        service = try SimulatedServer.makeService(backend, clock: clock)
        // The PostgreSQL backend makes its tables on first use: make them now, so that a backup
        // before any push copies empty tables.
        _ = try await service.storeNames()
    }

    private static func makeService(_ backend: SyncBackend, clock: ManualClock) throws -> SyncService {
        var configuration = SyncService.Configuration(backend: backend)
        configuration.storeConfiguration.durability = .bulk
        configuration.storeConfiguration.physicalClock = clock.function
        return try SyncService(configuration: configuration)
    }

    /// Stops the server, copies its storage aside (replacing an earlier copy), starts it again;
    /// returns the events the copy holds, or `nil` when there was nothing to copy.
    func backUp() async throws -> [Event]? {
        service.close()
        defer { service = (try? SimulatedServer.makeService(backend, clock: clock)) ?? service }
        switch kind {
        case .lmdb:
            try? FileManager.default.removeItem(atPath: backupPath)
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            try FileManager.default.copyItem(atPath: path, toPath: backupPath)
            let copy = try Store.open(at: backupPath + "/shared")
            defer { copy.close() }
            return try allEvents(of: copy)
        case .postgres:
            return try await TestPostgres.withAdminClient(database!) { client in
                for table in SimulatedServer.tables {
                    try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS backup_\(table)"))
                    try await client.query(
                        PostgresQuery(unsafeSQL: "CREATE TABLE backup_\(table) AS TABLE evstore_\(table)"))
                }
                var events: [Event] = []
                let rows = try await client.query(
                    "SELECT seq, body FROM backup_events WHERE store = 'shared' ORDER BY seq")
                for try await (seq, body) in rows.decode((Int64, ByteBuffer).self) {
                    events.append(try Event(canonical: Array(buffer: body), seq: UInt64(seq)))
                }
                return events
            }
        }
    }

    private static let tables = ["stores", "events", "replicas"]

    /// Stops the server, puts the copy of the last ``backUp()`` back, starts it again.
    func restore() async throws {
        service.close()
        switch kind {
        case .lmdb:
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: backupPath, toPath: path)
        case .postgres:
            try await TestPostgres.withAdminClient(database!) { client in
                try await client.query("TRUNCATE evstore_stores, evstore_events, evstore_replicas")
                for table in SimulatedServer.tables {
                    try await client.query(
                        PostgresQuery(unsafeSQL: "INSERT INTO evstore_\(table) SELECT * FROM backup_\(table)"))
                }
            }
        }
        service = try SimulatedServer.makeService(backend, clock: clock)
    }

    /// The server's log of the simulation's store, in server order (empty when no push created it).
    func events() async throws -> [Event] {
        guard try await service.storeNames().contains("shared") else { return [] }
        var events: [Event] = []
        var after: UInt64 = 0
        while true {
            let page = try await service.pull(store: "shared", after: after, limit: 1000)
            events += page.events
            guard page.next < page.head else { return events }
            after = page.next
        }
    }

    /// The items and search index the server's log makes: the server's own store with LMDB, a
    /// store that ingests the log otherwise (the PostgreSQL backend keeps no items).
    func snapshot(scratch: String) async throws -> StoreSnapshot {
        if kind == .lmdb { return try StoreSnapshot(try await service.store(named: "shared")) }
        var configuration = Store.Configuration()
        configuration.durability = .bulk
        configuration.physicalClock = clock.function
        let store = try Store.open(at: scratch, configuration: configuration)
        defer { store.close() }
        let events = try await events()
        for start in stride(from: 0, to: events.count, by: 500) {
            _ = try await store.ingest(Array(events[start..<min(start + 500, events.count)]))
        }
        return try StoreSnapshot(store)
    }
}
