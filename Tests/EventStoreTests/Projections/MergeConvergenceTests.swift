import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Convergence through real stores: replicas that ingest the same events, in any order, in any
/// batches, with re-deliveries, hold the same items byte for byte and answer searches alike.
struct MergeConvergenceTests {
    typealias F = ProjectionFixtures

    /// A history over several items and two collections, with unique event ids.
    static func events(seed: UInt64) -> [Event] {
        CoreFixtures.randomHistory(
            seed: seed, origins: 3 + Int(seed % 2), events: 40, values: .byField, collections: ["notes", "tasks"],
            items: ["a", "b", "c", "메모", "e"])
    }

    struct Replica {
        var items: [String: [String: [String: Value]]]
        var itemBytes: [[UInt8]]
        var counts: [Int]
        var searches: [[String]]
    }

    static let queries = [
        SearchQuery("sync", limit: 50), SearchQuery("동기화", collection: "notes", limit: 50),
        SearchQuery("off", collection: "tasks", limit: 50),
        SearchQuery("", collection: "notes", tags: ["work"], limit: 50),
        SearchQuery("회의록 메", limit: 50),
    ]

    /// Ingests `events` into a new store in the given order and batch sizes; reads it back.
    static func replica(_ events: [Event], batch: Int, verify: Bool) async throws -> Replica {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.path, configuration: F.configuration())
        defer { store.close() }
        for slice in events.slices(of: batch) {
            let result = try await store.ingest(slice)
            #expect(result.appended.count + result.duplicates.count == slice.count)
        }
        #expect(try store.head() == UInt64(Set(events.map(\.id)).count), "each event appended once")
        if verify {
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
        return Replica(
            items: try F.state(store), itemBytes: try F.itemStates(store),
            counts: try ["notes", "tasks"].map { try store.count(in: $0) },
            searches: try queries.map { try F.hits(store, $0) })
    }

    @Test func thirtyHistoriesConvergeWhateverTheOrder() async throws {
        for seed in UInt64(1)...30 {
            let events = Self.events(seed: seed)
            var random = SeededGenerator(seed: seed &+ 1_000)
            let first = try await Self.replica(events, batch: events.count, verify: seed % 10 == 1)
            // The declarative rule agrees with the stores.
            #expect(first.items == F.expectedItems(events), "seed \(seed)")
            #expect(first.counts == ["notes", "tasks"].map { first.items[$0]?.count ?? 0 })
            for round in 0..<3 {
                var order = events.shuffled(using: &random)
                // Re-deliver some events: a sync retry, a second path through a server.
                order += (0..<5).map { _ in events[Int(random.next() % UInt64(events.count))] }
                let other = try await Self.replica(order, batch: 1 + Int(random.next() % 9), verify: false)
                #expect(other.itemBytes == first.itemBytes, "seed \(seed) round \(round): item bytes differ")
                #expect(other.items == first.items, "seed \(seed) round \(round)")
                #expect(other.counts == first.counts, "seed \(seed) round \(round)")
                #expect(other.searches == first.searches, "seed \(seed) round \(round)")
            }
        }
    }

    @Test func replicasThatWriteLocallyAndExchangeConverge() async throws {
        let clocks = (0..<3).map { _ in ManualClock(start: F.epoch) }
        let directories = (0..<3).map { _ in TemporaryDirectory() }
        defer { directories.forEach { $0.remove() } }
        let stores = try (0..<3).map { index in
            try Store.open(at: directories[index].path, configuration: F.configuration(clock: clocks[index]))
        }
        defer { stores.forEach { $0.close() } }
        var random = SeededGenerator(seed: 2_024)
        var written: [[Event]] = [[], [], []]
        for _ in 0..<60 {
            let index = Int(random.next() % 3)
            // Clocks drift apart and sometimes step back.
            clocks[index].advance(by: Int64(random.next() % 5) - 1)
            let id = "n\(random.next() % 6)"
            let change: Change
            switch random.next() % 5 {
            case 0: change = .delete("notes", id: id)
            case 1, 2: change = .patch("notes", id: id, fields: ["title": F.value(for: "title", &random)])
            default:
                change = .put(
                    "notes", id: id,
                    fields: ["title": F.value(for: "title", &random), "tags": F.value(for: "tags", &random)])
            }
            written[index] += try await stores[index].append([change])
            // Now and then one replica hears from another.
            if random.next() % 4 == 0 {
                let from = Int(random.next() % 3)
                if from != index { _ = try await stores[index].ingest(written[from]) }
            }
        }
        for (index, store) in stores.enumerated() {
            for from in 0..<3 where from != index { _ = try await store.ingest(written[from]) }
        }
        let states = try stores.map { try F.state($0) }
        let bytes = try stores.map { try F.itemStates($0) }
        #expect(states[1] == states[0] && states[2] == states[0])
        #expect(bytes[1] == bytes[0] && bytes[2] == bytes[0])
        #expect(states[0]["notes"] == F.expectedItems(written.flatMap { $0 })["notes"])
        let hits = try stores.map { try F.hits($0, SearchQuery("sync", collection: "notes", limit: 100)) }
        #expect(hits[1] == hits[0] && hits[2] == hits[0])
        for store in stores { #expect(try store.verify().isConsistent) }
    }
}
