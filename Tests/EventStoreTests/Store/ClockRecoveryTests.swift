import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// Events stamped while the device's clock ran ahead get new stamps below a bound, under a new
/// replica id, and the store's clock goes back with them; nothing else changes.
@Suite("Clock recovery")
struct ClockRecoveryTests {
    static let day: Int64 = 86_400_000

    static func configuration(_ clock: ManualClock) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        return configuration
    }

    @Test("events stamped a day ahead get stamps below the bound, in order, with their bases and writes kept")
    func eventsAheadAreStampedAnew() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("store")
        let bound = HLCTimestamp(physical: CoreFixtures.epoch + 60_000, logical: .max)
        let (sane, ahead, original, change): ([Event], [Event], ReplicaID, Store.ReplicaIDChange)
        do {
            let store = try Store.open(at: path, configuration: Self.configuration(clock))
            defer { store.close() }
            original = store.replicaID
            sane = try await store.append([.put("notes", id: "n1", fields: ["title": "one", "n": 1])])
            clock.advance(by: Self.day)
            ahead =
                try await store.append([
                    .patch("notes", id: "n1", fields: ["title": "ahead"]),
                    .put("notes", id: "n2", fields: ["title": "two"]),
                ]) + [try await store.patch("notes", id: "n1", fields: ["n": 2])]
            #expect(ahead.allSatisfy { $0.hlc > bound })
            clock.advance(by: -Self.day + 1_000)  // the device's clock is right again
            let before = try ["n1", "n2"].map { try store.item("notes", $0)?.fields }
            change = try await store.restamp(from: ahead[0].id, notAfter: bound)
            #expect(change.previous == original && change.current != original && store.replicaID == change.current)
            #expect(change.restamped.map(\.seq) == ahead.map(\.seq))
            #expect(try ["n1", "n2"].map { try store.item("notes", $0)?.fields } == before, "the same writes win")
            #expect(try store.verify().isConsistent)
        }
        let store = try Store.open(at: path, configuration: Self.configuration(clock))
        defer { store.close() }
        let moved = try store.read { reader in try ahead.map { try reader.event(at: $0.seq)! } }
        #expect(moved.map(\.id.origin) == Array(repeating: change.current, count: 3))
        #expect(moved.map(\.fields) == ahead.map(\.fields))
        #expect(moved.allSatisfy { $0.hlc > sane[0].hlc && $0.hlc <= bound }, "\(moved.map(\.hlc))")
        #expect(zip(moved, moved.dropFirst()).allSatisfy { $0.hlc < $1.hlc })
        // The last patch of n1 had seen the first: its base follows it to its new stamp.
        #expect(ahead[2].base == ahead[0].hlc)
        #expect(moved[2].base == moved[0].hlc)
        // The clock went back with them, and stays back after reopening.
        let next = try await store.patch("notes", id: "n1", fields: ["title": "after"])
        #expect(next.hlc > moved[2].hlc && next.hlc <= bound)
        #expect(try store.item("notes", "n1")?["title"] == "after")
        #expect(try store.verify().isConsistent)
    }

    @Test("refused, changing nothing: another event past the bound or between, an id that is not the current one")
    func refusalsChangeNothing() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: Self.configuration(clock)) { store in
            // Not stamped after everything else: an event of another replica lies between.
            let mine = try await store.put("notes", id: "n0", fields: ["title": "mine"])
            _ = try await store.ingest([
                CoreFixtures.remote(
                    ReplicaID(high: 8, low: 8), 1, at: HLCTimestamp(rawValue: mine.hlc.rawValue + 1), item: "n3")
            ])
            _ = try await store.put("notes", id: "n0", fields: ["title": "mine, later"])
            await #expect(throws: EventStoreError.self) {
                try await store.restamp(from: mine.id, notAfter: HLCTimestamp(physical: clock.now + 1_000, logical: 0))
            }
            clock.advance(by: Self.day)
            let foreign = CoreFixtures.remote(
                ReplicaID(high: 9, low: 9), 1, at: HLCTimestamp(physical: clock.now - 10, logical: 0), item: "n2",
                fields: ["title": "also ahead"])
            _ = try await store.ingest([foreign])
            let ahead = try await store.put("notes", id: "n1", fields: ["title": "ahead"])
            clock.advance(by: -Self.day)
            let bound = HLCTimestamp(physical: clock.now + 60_000, logical: .max)
            let before = try StoreSnapshot(store)
            let replica = store.replicaID
            await #expect(throws: EventStoreError.self) {
                do {
                    try await store.restamp(from: ahead.id, notAfter: bound)
                } catch let error as EventStoreError {
                    #expect(error.code == .clockSkew, "\(error)")
                    throw error
                }
            }
            await #expect(throws: EventStoreError.self) {
                try await store.restamp(from: foreign.id, notAfter: bound)
            }
            #expect(store.replicaID == replica)
            #expect(try StoreSnapshot(store) == before)
            // With the bound past the other event too, the store's own event moves.
            let later = HLCTimestamp(physical: foreign.hlc.physical + 10, logical: 0)
            let change = try await store.restamp(from: ahead.id, notAfter: later)
            #expect(change.restamped.map(\.seq) == [ahead.seq])
            let moved = try store.read { try $0.event(at: ahead.seq)! }
            #expect(moved.hlc > foreign.hlc && moved.hlc <= later)
        }
    }
}
