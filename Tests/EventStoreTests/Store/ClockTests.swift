import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// The hybrid logical clock: stamps only move forward, ratchet past received stamps, and refuse
/// stamps too far in the future.
struct ClockTests {
    static func configuration(_ clock: ManualClock, skew: UInt64 = 60_000) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        configuration.maxClockSkewMilliseconds = skew
        return configuration
    }

    @Test func stampsIncreaseWhenTheClockGoesBackwardsOrStandsStill() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: ClockTests.configuration(clock)) { store in
            var stamps: [HLCTimestamp] = []
            var random = SeededGenerator(seed: 5)
            for step in 0..<200 {
                switch random.next() % 4 {
                case 0: clock.advance(by: -Int64(random.next() % 10_000))  // backwards
                case 1: break  // standing still
                default: clock.advance(by: Int64(random.next() % 3))
                }
                let event = try await store.put("notes", id: "n\(step % 7)", fields: ["step": .int(Int64(step))])
                stamps.append(event.hlc)
                #expect(event.hlc.physical >= clock.now, "never behind the physical clock")
            }
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "strictly increasing")
            // Items show the last write even though the physical clock went back.
            #expect(try store.item("notes", "n3")?["step"] == .int(Int64(stamps.indices.last { $0 % 7 == 3 }!)))
        }
    }

    /// What a sync push declares (``StoreWriter/syncDeclaration(of:)``) stays true: every later
    /// stamp exceeds the declared clock, after the physical clock steps back and after a restart
    /// (the raised clock is saved with the declaring commit, which appends nothing).
    @Test func everyStampAfterASyncDeclarationExceedsItsClock() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("store")
        let declared: (through: UInt64, clock: HLCTimestamp)
        do {
            let store = try Store.open(at: path, configuration: ClockTests.configuration(clock))
            defer { store.close() }
            let first = try await store.put("notes", id: "n1", fields: ["a": 1])
            clock.advance(by: 5_000)
            declared = try await store.write { try $0.syncDeclaration(of: store.replicaID) }
            #expect(declared.through == first.id.sequence)
            #expect(declared.clock >= HLCTimestamp(physical: clock.now, logical: 0))
            #expect(try store.head() == 1, "the declaration appends nothing")
        }
        // The physical clock steps back and the store is reopened: the declaring commit saved
        // the raised clock, so the next stamp is still above what was declared.
        clock.advance(by: -30_000)
        let store = try Store.open(at: path, configuration: ClockTests.configuration(clock))
        defer { store.close() }
        let afterRestart = try await store.put("notes", id: "n1", fields: ["a": 2])
        #expect(afterRestart.hlc > declared.clock)
        // In one process too: a declaration with the clock behind, then a step further back.
        let again = try await store.write { try $0.syncDeclaration(of: store.replicaID) }
        #expect(again.through == 2 && again.clock >= afterRestart.hlc)
        clock.advance(by: -30_000)
        let later = try await store.put("notes", id: "n1", fields: ["a": 3])
        #expect(later.hlc > again.clock)
    }

    @Test func aFrozenClockCountsLogicallyAndCarriesIntoTheNextMillisecond() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: ClockTests.configuration(clock)) { store in
            let events = try await store.append((0..<5).map { .put("notes", id: "n\($0)", fields: ["a": 1]) })
            #expect(events.map(\.hlc.physical) == Array(repeating: CoreFixtures.epoch, count: 5))
            #expect(events.map(\.hlc.logical) == [0, 1, 2, 3, 4])
            // A received stamp at the top of the logical range: the next local stamp carries over.
            let top = HLCTimestamp(physical: CoreFixtures.epoch, logical: .max)
            _ = try await store.ingest([
                CoreFixtures.remote(ReplicaID(high: 3, low: 3), 1, at: top, item: "r", fields: ["a": 2])
            ])
            let next = try await store.put("notes", id: "after", fields: ["a": 3])
            #expect(next.hlc == HLCTimestamp(physical: CoreFixtures.epoch + 1, logical: 0))
        }
    }

    @Test func aReceivedStampWithinTheBoundRatchetsTheClock() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: ClockTests.configuration(clock)) { store in
            let before = try await store.put("notes", id: "n1", fields: ["title": "before"])
            let ahead = HLCTimestamp(physical: clock.now + 30_000, logical: 7)
            let remote = CoreFixtures.remote(
                ReplicaID(high: 4, low: 4), 1, at: ahead, item: "n1", .patch, fields: ["title": "remote"])
            let result = try await store.ingest([remote])
            #expect(result.appended.count == 1)
            clock.advance(by: 10)
            let after = try await store.patch("notes", id: "n1", fields: ["title": "local, later"])
            #expect(after.hlc > ahead, "the local write orders after the received one")
            #expect(after.hlc == HLCTimestamp(physical: ahead.physical, logical: 8))
            #expect(after.base == ahead, "the local write saw the remote one")
            #expect(try store.item("notes", "n1")?["title"] == "local, later")
            #expect(before.hlc < ahead)
            // Once physical time passes the received stamp, stamps follow physical time again.
            clock.advance(by: 40_000)
            let later = try await store.put("notes", id: "n2", fields: ["title": "x"])
            #expect(later.hlc == HLCTimestamp(physical: clock.now, logical: 0))
        }
    }

    @Test func aStampBeyondTheBoundIsRefusedAndWritesNothing() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: ClockTests.configuration(clock)) { store in
            try await store.put("notes", id: "n1", fields: ["title": "local"])
            let dump = try ProjectionFixtures.projectionBytes(store)
            let origin = ReplicaID(high: 5, low: 5)
            let poison = HLCTimestamp(physical: clock.now + 60_001, logical: 0)
            let far = CoreFixtures.remote(
                origin, 1, at: poison, item: "n1", .patch, fields: ["title": "from the future"])
            await expectStoreError(.clockSkew) { _ = try await store.ingest([far]) }
            await expectStoreError(.clockSkew, "inside a write transaction") {
                _ = try await store.write { writer in try writer.ingest(far) }
            }
            #expect(try store.head() == 1)
            #expect(try store.item("notes", "n1")?["title"] == "local")
            #expect(try ProjectionFixtures.projectionBytes(store) == dump)
            // The refused stamp did not poison the clock.
            clock.advance(by: 1)
            let next = try await store.put("notes", id: "n2", fields: ["title": "x"])
            #expect(next.hlc == HLCTimestamp(physical: clock.now, logical: 0))
            // Exactly at the bound is accepted.
            let edge = CoreFixtures.remote(
                origin, 1, at: HLCTimestamp(physical: clock.now + 60_000, logical: 0), item: "n3", fields: ["a": 1])
            #expect(try await store.ingest([edge]).appended.count == 1)
        }
    }

    @Test func theSkewBoundIsConfigurable() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: ClockTests.configuration(clock, skew: 1_000)) {
            store async throws in
            let origin = ReplicaID(high: 6, low: 6)
            let near = CoreFixtures.remote(
                origin, 1, at: HLCTimestamp(physical: clock.now + 900, logical: 0), item: "a", fields: ["a": 1])
            let far = CoreFixtures.remote(
                origin, 2, at: HLCTimestamp(physical: clock.now + 2_000, logical: 0), item: "b", fields: ["a": 1])
            #expect(try await store.ingest([near]).appended.count == 1)
            await expectStoreError(.clockSkew) { _ = try await store.ingest([far]) }
            clock.advance(by: 1_500)
            #expect(try await store.ingest([far]).appended.count == 1, "accepted once the local clock caught up")
        }
    }

    @Test func aStampFromThePastIsAcceptedAndLosesToNewerWrites() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        try await withTemporaryStore(configuration: ClockTests.configuration(clock)) { store in
            let local = try await store.put("notes", id: "n1", fields: ["title": "new"])
            let old = CoreFixtures.remote(
                ReplicaID(high: 8, low: 8), 1, at: HLCTimestamp(physical: clock.now - 86_400_000, logical: 0),
                item: "n1", .patch,
                fields: ["title": "a day old", "extra": 1])
            _ = try await store.ingest([old])
            let item = try #require(try store.item("notes", "n1"))
            #expect(item["title"] == "new")
            #expect(item["extra"] == nil, "the put cleared fields written before it")
            #expect(item.version == local.hlc)
            let next = try await store.put("notes", id: "n2", fields: ["title": "x"])
            #expect(next.hlc > local.hlc)
        }
    }

    @Test func timestampParts() {
        let stamp = HLCTimestamp(physical: 1_700_000_000_000, logical: 3)
        #expect(stamp.physical == 1_700_000_000_000)
        #expect(stamp.logical == 3)
        #expect(stamp.rawValue == 1_700_000_000_000 << 16 | 3)
        #expect(stamp.description == "2023-11-14T22:13:20.000Z+3")
        #expect(HLCTimestamp(physical: 1, logical: 0) > HLCTimestamp(physical: 0, logical: .max))
        let a = Stamp(hlc: stamp, origin: ReplicaID(high: 0, low: 1))
        let b = Stamp(hlc: stamp, origin: ReplicaID(high: 0, low: 2))
        #expect(a < b, "equal clock stamps order by origin")
        #expect(ReplicaID(hex: a.origin.description) == a.origin)
        #expect(a.origin.description == "00000000000000000000000000000001")
        #expect(ReplicaID(hex: "xyz") == nil)
    }
}
