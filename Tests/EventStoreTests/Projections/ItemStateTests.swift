import EventStoreTestSupport
import Testing

@testable import EventStore

/// The pure merge of one item (`ItemState.apply`): the rules one by one, then order
/// independence over a thousand seeded random histories.
struct ItemStateTests {
    typealias F = ProjectionFixtures
    static let a = ReplicaID(high: 1, low: 1)
    static let b = ReplicaID(high: 2, low: 2)

    static func at(_ millisecond: UInt64, _ logical: UInt16 = 0) -> HLCTimestamp {
        HLCTimestamp(physical: F.epoch + millisecond, logical: logical)
    }

    static func state(_ events: [Event]) -> ItemState {
        var state = ItemState()
        for event in events { state.apply(event) }
        return state
    }

    /// Applies `events` in every order and checks all give the same bytes; returns the state.
    static func merged(_ events: [Event], sourceLocation: SourceLocation = #_sourceLocation) -> ItemState {
        let reference = state(events)
        for order in permutations(events) {
            #expect(
                state(order).encoded() == reference.encoded(), "order \(order.map(\.id.sequence))",
                sourceLocation: sourceLocation)
        }
        return reference
    }

    static func permutations(_ events: [Event]) -> [[Event]] {
        guard events.count > 1 else { return [events] }
        return events.indices.flatMap { index in
            var rest = events
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    // MARK: The rules

    @Test func aPutReplacesEveryFieldAndAPatchKeepsTheOthers() {
        let put = F.event(Self.a, 1, at: Self.at(1), "notes", "x", .put, ["title": "t", "content": "c"])
        let patch = F.event(Self.a, 2, at: Self.at(2), "notes", "x", .patch, ["title": "t2"])
        let replace = F.event(Self.a, 3, at: Self.at(3), "notes", "x", .put, ["done": true])
        #expect(Self.merged([put, patch]).values == ["title": "t2", "content": "c"])
        let state = Self.merged([put, patch, replace])
        #expect(state.values == ["done": true])
        #expect(state.exists)
        #expect(state.version == replace.stamp)
    }

    @Test func aDeleteIsATombstoneAndALaterWriteRevivesOnlyItsFields() {
        let put = F.event(Self.a, 1, at: Self.at(1), "notes", "x", .put, ["title": "t", "content": "c"])
        let delete = F.event(Self.a, 2, at: Self.at(2), "notes", "x", .delete)
        let deleted = Self.merged([put, delete])
        #expect(!deleted.exists)
        #expect(deleted.values.isEmpty)
        #expect(deleted.version == delete.stamp, "a tombstone keeps its stamp")

        let revive = F.event(Self.b, 1, at: Self.at(3), "notes", "x", .patch, ["done": true])
        let revived = Self.merged([put, delete, revive])
        #expect(revived.exists)
        #expect(revived.values == ["done": true], "fields written before the delete stay gone")

        // A write older than the delete, arriving after it, changes nothing.
        let stale = F.event(Self.b, 1, at: Self.at(1, 5), "notes", "x", .patch, ["content": "late"])
        #expect(!Self.merged([put, delete, stale]).exists)
    }

    @Test func aConcurrentPatchNewerThanAPutSurvivesIt() {
        let patch = F.event(Self.b, 1, at: Self.at(5), "notes", "x", .patch, ["content": "newer"])
        let put = F.event(Self.a, 1, at: Self.at(4), "notes", "x", .put, ["title": "older put"])
        #expect(Self.merged([patch, put]).values == ["title": "older put", "content": "newer"])
    }

    @Test func equalClockStampsAreOrderedByOrigin() {
        let fromA = F.event(Self.a, 1, at: Self.at(7, 2), "notes", "x", .patch, ["title": "from a"])
        let fromB = F.event(Self.b, 1, at: Self.at(7, 2), "notes", "x", .patch, ["title": "from b"])
        #expect(Self.a < Self.b)
        #expect(Self.merged([fromA, fromB]).values == ["title": "from b"])
        // A delete and a put at the same stamp: the greater origin decides too.
        let deleteB = F.event(Self.b, 2, at: Self.at(9), "notes", "x", .delete)
        let putA = F.event(Self.a, 2, at: Self.at(9), "notes", "x", .put, ["title": "put a"])
        #expect(!Self.merged([fromA, deleteB, putA]).exists)
    }

    @Test func anEmptyPutCreatesAnItemWithoutFields() {
        let put = F.event(Self.a, 1, at: Self.at(1), "notes", "x", .put)
        let state = Self.merged([put])
        #expect(state.exists && state.values.isEmpty)
        #expect(!ItemState().exists, "a never-written item does not exist")
    }

    @Test func applyingAnEventAgainChangesNothing() {
        let events = CoreFixtures.randomHistory(seed: 99, events: 20, values: .byField)
        let once = Self.state(events)
        #expect(Self.state(events + events.reversed()).encoded() == once.encoded())
    }

    // MARK: Outcomes (conflicts and history)

    @Test func outcomesTellConcurrentWritesFromSequentialOnes() {
        let create = F.event(Self.a, 1, at: Self.at(1), "notes", "x", .put, ["title": "draft"])
        var state = ItemState()
        state.apply(create)
        // B saw the create (base = its stamp) and overwrote: sequential.
        let sequential = F.event(Self.b, 1, at: Self.at(2), base: create.hlc, "notes", "x", .patch, ["title": "b"])
        let first = state.apply(sequential, reporting: .all)
        #expect(first.count == 1)
        #expect(first.first?.kind == .won && first.first?.concurrent == false)
        // A writes without having seen B's write: concurrent, and it loses (older stamp).
        let concurrent = F.event(Self.a, 2, at: Self.at(1, 9), base: create.hlc, "notes", "x", .patch, ["title": "a"])
        let second = state.apply(concurrent, reporting: .all)
        #expect(second.count == 1)
        #expect(second.first?.kind == .lost && second.first?.concurrent == true)
        #expect(second.first?.winner?.eventID == sequential.id && second.first?.loser?.eventID == concurrent.id)
        #expect(state.values == ["title": "b"])
    }

    @Test func aPutReportsTheFieldsItClears() {
        var state = ItemState()
        state.apply(F.event(Self.a, 1, at: Self.at(1), "notes", "x", .put, ["title": "t", "content": "c"]))
        let put = F.event(Self.b, 1, at: Self.at(2), "notes", "x", .put, ["title": "new"])
        let outcomes = state.apply(put, reporting: .all).sorted { $0.field < $1.field }
        #expect(outcomes.map(\.field) == ["content", "title"])
        #expect(outcomes.first?.kind == .cleared && outcomes.first?.winnerClears == true)
        #expect(outcomes.last?.kind == .won)
    }

    /// What the writer asks for (only the outcomes of concurrent writes, from which conflict
    /// records are made) is exactly the concurrent part of the full report, and asking for less
    /// changes nothing in the state.
    @Test func theConflictReportIsTheConcurrentPartOfTheFullOne() {
        var concurrentSeen = 0
        for seed in 0..<300 as Range<UInt64> {
            let events = CoreFixtures.randomHistory(seed: seed, origins: 3, events: 12, values: .byField)
            var full = ItemState()
            var conflicts = ItemState()
            var none = ItemState()
            for event in events {
                // Fields come in dictionary order, which differs between states: by name.
                let all = full.apply(event, reporting: .all).sorted { $0.field < $1.field }
                let reported = conflicts.apply(event, reporting: .conflicts).sorted { $0.field < $1.field }
                #expect(none.apply(event).isEmpty)
                let expected = all.filter(\.concurrent)
                concurrentSeen += expected.count
                #expect(reported.map(\.field) == expected.map(\.field), "seed \(seed)")
                #expect(reported.map(\.kind) == expected.map(\.kind), "seed \(seed)")
                #expect(reported.map(\.loser) == expected.map(\.loser), "seed \(seed)")
                #expect(reported.map(\.winner) == expected.map(\.winner), "seed \(seed)")
            }
            #expect(conflicts.encoded() == full.encoded() && none.encoded() == full.encoded(), "seed \(seed)")
        }
        #expect(concurrentSeen > 0)
    }

    // MARK: Order independence

    /// The acceptance property: for 1,000 random histories (three origins, puts, patches and
    /// deletes, equal physical times), five random orders give the same bytes, duplicates change
    /// nothing, and the result is what the declarative rule says.
    @Test func aThousandHistoriesMergeTheSameInAnyOrder() {
        var failures = 0
        for seed in UInt64(1)...1_000 {
            let events = CoreFixtures.randomHistory(seed: seed, events: 5 + Int(seed % 16), values: .byField)
            let reference = Self.state(events)
            let bytes = reference.encoded()
            var random = SeededGenerator(seed: seed &* 0x9E37)
            for _ in 0..<5 {
                var shuffled = events.shuffled(using: &random)
                // Re-deliver a few events, anywhere.
                for _ in 0..<Int(random.next() % 4) {
                    shuffled.insert(
                        events[Int(random.next() % UInt64(events.count))],
                        at: Int(random.next() % UInt64(shuffled.count + 1)))
                }
                if Self.state(shuffled).encoded() != bytes { failures += 1 }
            }
            let expected = F.expected(events)
            if (reference.exists ? reference.values : nil) != expected {
                failures += 1
                Issue.record(
                    "seed \(seed): \(reference.values) exists=\(reference.exists), rule says \(String(describing: expected))"
                )
            }
        }
        #expect(failures == 0)
    }

    @Test func encodedStatesDecodeToTheSameState() throws {
        for seed in UInt64(1)...200 {
            let state = Self.state(CoreFixtures.randomHistory(seed: seed, origins: 4, events: 15, values: .byField))
            let bytes = state.encoded()
            let decoded = try bytes.withUnsafeBytes { try ItemState(decoding: $0) }
            #expect(decoded == state)
            #expect(decoded.encoded() == bytes)
            for length in [0, 1, bytes.count / 2, bytes.count - 1] {
                #expect(throws: EventStoreError.self) {
                    try Array(bytes.prefix(length)).withUnsafeBytes { try ItemState(decoding: $0) }
                }
            }
        }
    }
}
