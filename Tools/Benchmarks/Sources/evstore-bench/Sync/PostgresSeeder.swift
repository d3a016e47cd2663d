import EventStore
import EventSync
import EventSyncService
import SyncPostgres

/// Seeds a store of the PostgreSQL backend with the LMDB seed store's log: the same events in
/// the same order, so both backends serve the same log (the same seqs, digests and checksums).
///
/// The events go through the server's own push path (``EventSyncService/SyncService`` with the
/// PostgreSQL backend, called in process: no HTTP, no JSON), as the seed store's own pushes of
/// ``SyncLimits/maxPushEvents`` events, one durable transaction each.
struct PostgresSeeder {
    /// The LMDB seed store written by ``SyncBenchmark``.
    let seedStore: String
    let database: PostgresBackend

    /// Pushes every event of the seed store into `storeName`; returns events/s (pushes only:
    /// reading the seed store is outside the clock).
    func seed(into storeName: String) throws -> Double {
        let store = try Store.open(at: seedStore, configuration: SyncBenchmark.serverStoreConfiguration)
        defer { store.close() }
        let service = try SyncService(configuration: .init(backend: .postgres(database)))
        defer { service.close() }
        let transport = InProcessTransport(service: service, storeName: storeName)
        let replica = store.replicaID
        let head = try store.head()
        let batch = UInt64(SyncLimits().maxPushEvents)
        var watch = Stopwatch()
        var from: UInt64 = 1
        while from <= head {
            let through = min(head, from + batch - 1)
            let events = try store.read { reader in
                var events: [Event] = []
                try reader.forEachEvent(from: from, through: through) { event in
                    events.append(event)
                    return true
                }
                return events
            }
            let request = PushRequest(replica: replica, events: events)
            let response = try watch.measure { try runBlocking { try await transport.push(request, check: nil) } }
            guard response.accepted == events.count else {
                throw BenchError(
                    "seeding PostgreSQL: the server accepted \(response.accepted) of \(events.count) events")
            }
            from = through + 1
        }
        return watch.rate(Int(head))
    }
}
