import EventStore
import EventStoreTestSupport
import EventSync
import PostgresNIO
import SyncTestSupport
import Testing

@testable import EventSyncService
@testable import SyncPostgres

/// Pages the PostgreSQL backend reads: a page read while pushes commit never passes the head it
/// reports, also for events whose JSON is smaller than their stored bodies; a page of large
/// events reads about the events it holds, not `limit` of them.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct PageReadTests {
    @Test func aPageReadWhilePushesCommitNeverPassesItsHead() async throws {
        let directory = TemporaryDirectory(prefix: "pg-page-read")
        defer { directory.remove() }
        let service = try await service(maxPageBytes: 60_000)
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

    @Test func aPageOfLargeEventsReadsAboutTheEventsItHolds() async throws {
        let directory = TemporaryDirectory(prefix: "pg-page-sizes")
        defer { directory.remove() }
        let service = try await service(maxPageBytes: 700_000)
        defer { service.close() }
        let storage = try #require(service.storage as? PostgresSyncStorage)
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<30 {
            // Random text: about 200 KB a body, so that three fit in a page.
            let text = String(
                (0..<200_000).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator))) })
            try await replica.append([.put("files", id: "f\(round)", fields: ["body": .string(text)])])
        }
        let events = try allEvents(of: replica)
        for start in stride(from: 0, to: events.count, by: 5) {
            _ = try await service.push(
                store: "files", PushRequest(replica: replica.replicaID, events: Array(events[start..<(start + 5)])))
        }
        var after: UInt64 = 0
        var pages = 0
        while after < UInt64(events.count) {
            let before = storage.pageSizes.eventsRead
            let page = try await service.pull(store: "files", after: after, limit: 1000)
            let read = storage.pageSizes.eventsRead - before
            #expect(page.events.count == 3 || page.next == UInt64(events.count))
            // The first page of the store asks for a few; the next ones for what their sizes say fit.
            #expect(read <= (pages == 0 ? PageSizeEstimates.firstRead : page.events.count + 3), "page \(pages)")
            #expect(page.events.map(\.seq) == Array((after + 1)...(after + UInt64(page.events.count))))
            after = page.next
            pages += 1
        }
        #expect(pages == 10)
    }

    /// Each statement of a page read names the range of seqs it reads (seqs are dense); a gap,
    /// which pushes never leave, is read past as one statement reading every event would.
    @Test func aGapInTheSeqsIsReadPast() async throws {
        let directory = TemporaryDirectory(prefix: "pg-page-gap")
        defer { directory.remove() }
        let database = try await TestPostgres.freshDatabase()
        let service = try SyncService(configuration: .init(backend: .postgres(database)))
        defer { service.close() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        for round in 0..<40 {
            try await replica.put("notes", id: "n\(round)", fields: ["title": .string("note \(round)")])
        }
        _ = try await service.push(
            store: "notes", PushRequest(replica: replica.replicaID, events: try allEvents(of: replica)))
        try await TestPostgres.withAdminClient(database) { client in
            _ = try await client.query("DELETE FROM evstore_events WHERE store = 'notes' AND seq BETWEEN 11 AND 30")
        }
        let first = try await service.pull(store: "notes", after: 0, limit: 15)
        #expect(first.events.map(\.seq) == Array(1...10) + Array(31...35))
        let second = try await service.pull(store: "notes", after: first.next, limit: 15)
        #expect(second.events.map(\.seq) == Array(36...40))
        let empty = try await service.pull(store: "notes", after: 12, limit: 15)
        #expect(empty.events.map(\.seq) == Array(31...40))
    }

    /// A service on a fresh database whose pages stop at `maxPageBytes`.
    private func service(maxPageBytes: Int) async throws -> SyncService {
        var configuration = SyncService.Configuration(backend: .postgres(try await TestPostgres.freshDatabase()))
        configuration.limits.maxPageBytes = maxPageBytes
        return try SyncService(configuration: configuration)
    }
}
