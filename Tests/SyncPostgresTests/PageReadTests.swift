import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import SyncPostgres
import SyncTestSupport
import Testing

/// Pages the PostgreSQL backend reads while pushes commit: a page never passes the head it
/// reports, also for events whose JSON is smaller than their stored bodies.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct PageReadTests {
    @Test func aPageReadWhilePushesCommitNeverPassesItsHead() async throws {
        let directory = TemporaryDirectory(prefix: "pg-page-read")
        defer { directory.remove() }
        var limits = SyncLimits()
        limits.maxPageBytes = 60_000
        var configuration = SyncService.Configuration(backend: .postgres(try await TestPostgres.freshDatabase()))
        configuration.limits = limits
        let service = try SyncService(configuration: configuration)
        defer { service.close() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        // Short decimals: their JSON is smaller than their stored bodies, so pages read on.
        var fields: [String: Value] = [:]
        for field in 0..<400 { fields["f\(field)"] = .double(Double(field % 7) + 0.5) }
        for round in 0..<300 { try await replica.append([.put("counters", id: "c\(round)", fields: fields)]) }
        let events = try allEvents(of: replica)
        _ = try await service.push(
            store: "counters", PushRequest(replica: replica.replicaID, events: Array(events.prefix(20))))

        let pushing = Task {
            for start in stride(from: 20, to: events.count, by: 5) {
                _ = try await service.push(
                    store: "counters",
                    PushRequest(replica: replica.replicaID, events: Array(events[start..<min(start + 5, events.count)]))
                )
            }
        }
        var pages = 0
        var after: UInt64 = 0
        while pages < 2_000 {
            let page = try await service.pull(store: "counters", after: after, limit: 1000)
            #expect(page.next <= page.head, "a page to \(page.next) past its head \(page.head)")
            #expect(page.events.map(\.seq) == Array((after + 1)..<(after + 1 + UInt64(page.events.count))))
            pages += 1
            if page.next >= UInt64(events.count) { break }
            // Read the log again from the start now and then, while pushes go on.
            after = page.next == page.head && pages % 3 == 0 ? 0 : page.next
        }
        try await pushing.value
    }
}
