import EventStoreTestSupport
import Testing

@testable import EventStore

/// The pure merge of add-wins sets and counters (`ItemState+Merge`): the rules one by one in
/// every order of arrival, then replicas that edit their own view and exchange events at random.
struct SetAndCounterStateTests {
    typealias F = ProjectionFixtures
    static let a = ReplicaID(high: 1, low: 1)
    static let b = ReplicaID(high: 2, low: 2)
    static let c = ReplicaID(high: 3, low: 3)

    static func at(_ millisecond: UInt64) -> HLCTimestamp { HLCTimestamp(physical: F.epoch + millisecond, logical: 0) }

    static func event(
        _ origin: ReplicaID, _ sequence: UInt64, at millisecond: UInt64, op operation: EventOperation = .patch,
        fields: [String: Value] = [:], _ updates: [String: FieldUpdate]
    ) -> Event {
        Event(
            id: EventID(origin: origin, sequence: sequence), hlc: at(millisecond), collection: "notes", item: "x",
            operation: operation, fields: fields, updates: updates)
    }

    static func state(_ events: [Event]) -> ItemState {
        var state = ItemState()
        for event in events { state.apply(event) }
        return state
    }

    /// Applies `events` in every order and checks all give the same bytes; returns the state.
    static func merged(_ events: [Event], sourceLocation: SourceLocation = #_sourceLocation) -> ItemState {
        let reference = state(events)
        for order in ItemStateTests.permutations(events) {
            #expect(
                state(order).encoded() == reference.encoded(), "order \(order.map(\.id))",
                sourceLocation: sourceLocation)
        }
        return reference
    }

    static func id(_ origin: ReplicaID, _ sequence: UInt64) -> EventID { EventID(origin: origin, sequence: sequence) }

    // MARK: Add-wins sets

    @Test func concurrentAdditionsAreAllKeptInTheOrderTheyWereAdded() {
        let first = Self.event(Self.a, 1, at: 1, ["tags": FieldUpdate(add: ["work"])])
        let second = Self.event(Self.b, 1, at: 2, ["tags": FieldUpdate(add: ["home", "work"])])
        let third = Self.event(Self.c, 1, at: 3, ["tags": FieldUpdate(add: ["urgent"])])
        let state = Self.merged([first, second, third])
        #expect(state.values["tags"] == ["work", "home", "urgent"])
        #expect(state.exists)
    }

    @Test func aRemovalTakesOnlyWhatItSawAndAConcurrentAdditionOutlivesIt() {
        let added = Self.event(Self.a, 1, at: 1, ["tags": FieldUpdate(add: ["draft", "work"])])
        // B saw A's addition and removes "draft"; C, not having seen the removal, adds it again.
        let removed = Self.event(
            Self.b, 1, at: 5, ["tags": FieldUpdate(remove: [.init(element: "draft", seen: [Self.id(Self.a, 1)])])])
        let readded = Self.event(Self.c, 1, at: 3, ["tags": FieldUpdate(add: ["draft"])])
        #expect(Self.merged([added, removed]).values["tags"] == ["work"])
        #expect(Self.merged([added, removed, readded]).values["tags"] == ["work", "draft"], "add wins")
    }

    @Test func aRemovalThatArrivesBeforeItsAdditionAndASecondRemovalChangeNothing() {
        let added = Self.event(Self.a, 1, at: 1, ["tags": FieldUpdate(add: ["x", "y"])])
        let removeX = FieldUpdate.Removal(element: "x", seen: [Self.id(Self.a, 1)])
        let first = Self.event(Self.b, 1, at: 2, ["tags": FieldUpdate(remove: [removeX])])
        let second = Self.event(Self.c, 1, at: 3, ["tags": FieldUpdate(remove: [removeX])])
        let state = Self.merged([added, first, second])
        #expect(state.values["tags"] == ["y"])
        // The removals remember the addition they took: the same bytes in every order above.
        #expect(state.sets["tags"]?.elements[Value.string("x").encodedBytes]?.removed == [Self.id(Self.a, 1)])
    }

    @Test func aWholeListWithoutUpdatesIsTheSetsOwnListLastWriterWins() {
        // An older replica (or the app before the field was declared a set) writes whole lists.
        let plain = Self.event(Self.a, 1, at: 1, op: .put, fields: ["title": "t", "tags": ["a", "b"]], [:])
        let added = Self.event(Self.b, 1, at: 2, ["tags": FieldUpdate(add: ["c"])])
        #expect(Self.merged([plain, added]).values == ["title": "t", "tags": ["a", "b", "c"]])
        // A later whole list replaces the earlier one; the additions stay.
        let replaced = Self.event(Self.a, 2, at: 3, fields: ["tags": ["b"]], [:])
        #expect(Self.merged([plain, added, replaced]).values["tags"] == ["b", "c"])
        // A removal takes an element of the own list by naming the list's write.
        let removed = Self.event(
            Self.c, 1, at: 4, ["tags": FieldUpdate(remove: [.init(element: "a", seen: [Self.id(Self.a, 1)])])])
        #expect(Self.merged([plain, added, removed]).values["tags"] == ["b", "c"])
        // A delete clears the own list, as it clears any field's value.
        let deleted = Self.event(Self.b, 2, at: 5, op: .delete, [:])
        let recreated = Self.event(Self.a, 3, at: 6, fields: ["title": "new"], [:])
        #expect(Self.merged([plain, deleted, recreated]).values == ["title": "new"])
    }

    @Test func elementsAreToldApartByTheirBytesNotByEquality() {
        // "é" composed and decomposed: equal as Swift strings, different bytes.
        let composed = Value.string("caf\u{E9}")
        let decomposed = Value.string("cafe\u{301}")
        #expect(composed == decomposed)
        let first = Self.event(Self.a, 1, at: 1, ["tags": FieldUpdate(add: [composed])])
        let second = Self.event(Self.b, 1, at: 1, ["tags": FieldUpdate(add: [decomposed])])
        let state = Self.merged([first, second])
        #expect(state.sets["tags"]?.elements.count == 2)
        #expect(
            state.values["tags"]?.arrayValue?.map(\.encodedBytes) == [composed.encodedBytes, decomposed.encodedBytes])
    }

    @Test func aDeleteHidesConcurrentAdditionsUntilALaterWriteRevivesTheItem() {
        let added = Self.event(Self.a, 1, at: 1, op: .put, fields: ["title": "t"], ["tags": FieldUpdate(add: ["x"])])
        // B deleted the item having seen A's put; C added a tag concurrently, before the delete.
        let deleted = Self.event(
            Self.b, 1, at: 4, op: .delete,
            ["tags": FieldUpdate(remove: [.init(element: "x", seen: [Self.id(Self.a, 1)])])])
        let concurrent = Self.event(Self.c, 1, at: 3, ["tags": FieldUpdate(add: ["y"])])
        let hidden = Self.merged([added, deleted, concurrent])
        #expect(!hidden.exists, "a write older than the delete does not revive the item")
        let revived = Self.merged([
            added, deleted, concurrent, Self.event(Self.a, 2, at: 6, fields: ["title": "back"], [:]),
        ])
        #expect(revived.values == ["title": "back", "tags": ["y"]], "the concurrent addition was never taken away")
        let added2 = Self.event(Self.c, 2, at: 7, ["tags": FieldUpdate(add: ["z"])])
        #expect(
            Self.merged([added, deleted, added2]).values == ["tags": ["z"]], "an addition after the delete revives it")
    }

    // MARK: Counters

    @Test func concurrentIncrementsAddUpOnTheCountersOwnValue() {
        let base = Self.event(Self.a, 1, at: 1, op: .put, fields: ["views": 10], [:])
        let plusThree = Self.event(Self.a, 2, at: 2, ["views": .increment(3)])
        let plusTwo = Self.event(Self.b, 1, at: 2, ["views": .increment(2)])
        let minusOne = Self.event(Self.c, 1, at: 9, ["views": .increment(-1)])
        #expect(Self.merged([base, plusThree, plusTwo, minusOne]).values["views"] == 14)
        #expect(Self.merged([plusThree, plusTwo]).values["views"] == 5)
        // Wrapping arithmetic: any order gives the same value, even past 64 bits.
        let huge = Self.event(Self.b, 2, at: 3, ["views": .increment(.max)])
        #expect(Self.merged([plusThree, huge]).values["views"] == .int(Int64.max &+ 3))
        #expect(Self.merged([plusTwo, Self.event(Self.c, 2, at: 4, ["views": .increment(-2)])]).values["views"] == nil)
    }

    // MARK: Local writes become updates

    @Test func localWritesBecomeTheUpdatesThatTakeTheFieldThere() throws {
        let policies: [String: MergePolicy] = ["tags": .addWinsSet, "views": .counter]
        var state = ItemState()
        state.apply(Self.event(Self.a, 1, at: 1, ["tags": FieldUpdate(add: ["a", "b"]), "views": .increment(4)]))

        let put = try state.eventParts(
            for: .put("notes", id: "x", fields: ["title": "t", "tags": ["b", "c"], "views": 10]), policies: policies)
        #expect(put.fields == ["title": "t"])
        #expect(
            put.updates["tags"] == FieldUpdate(add: ["c"], remove: [.init(element: "a", seen: [Self.id(Self.a, 1)])]))
        #expect(put.updates["views"] == .increment(6))

        let omitted = try state.eventParts(for: .put("notes", id: "x", fields: ["title": "t"]), policies: policies)
        #expect(omitted.updates["views"] == .increment(-4), "a put that leaves a counter out empties it")
        #expect(omitted.updates["tags"]?.remove.map(\.element) == ["a", "b"], "and takes the elements it holds")

        let deleted = try state.eventParts(for: .delete("notes", id: "x"), policies: policies)
        #expect(deleted.fields.isEmpty && deleted.updates.count == 2)

        let same = try state.eventParts(
            for: .patch("notes", id: "x", fields: ["tags": ["a", "b"]]), policies: policies)
        #expect(same.updates["tags"] == FieldUpdate(), "the same list again records the write and changes nothing")

        let edit = try state.eventParts(
            for: .edit("notes", id: "x", ["tags": FieldEdit(add: ["a"], remove: ["b", "zzz"])]), policies: policies)
        #expect(
            edit.updates["tags"] == FieldUpdate(remove: [.init(element: "b", seen: [Self.id(Self.a, 1)])]),
            "adding an element the set holds changes nothing")

        // Made from an older version of the item: what was added or counted since stays.
        var later = state
        later.apply(Self.event(Self.b, 1, at: 5, ["tags": FieldUpdate(add: ["c"]), "views": .increment(10)]))
        let read = Self.at(1)
        let stale = try later.eventParts(
            for: .put("notes", id: "x", fields: ["title": "t", "tags": ["a"], "views": 4], base: read),
            policies: policies, base: read, incrementsSince: { $0 == "views" ? 10 : 0 })
        #expect(stale.updates["tags"] == FieldUpdate(remove: [.init(element: "b", seen: [Self.id(Self.a, 1)])]))
        #expect(stale.updates["views"] == .increment(0), "the 4 it read, written back: the 10 counted since stay")

        #expect(throws: EventStoreError.self) {
            try state.eventParts(for: .increment("notes", id: "x", field: "tags"), policies: policies)
        }
        #expect(throws: EventStoreError.self) {
            try state.eventParts(for: .increment("notes", id: "x", field: "title"), policies: policies)
        }
        #expect(throws: EventStoreError.self) {
            try state.eventParts(for: .patch("notes", id: "x", fields: ["views": 2.5]), policies: policies)
        }
        #expect(throws: EventStoreError.self) {
            try state.eventParts(for: .patch("notes", id: "x", fields: ["tags": "solo"]), policies: policies)
        }
    }

    // MARK: Replicas editing their own view

    /// Three replicas edit one item's tags and counter against their own state, as the write
    /// path does, and exchange events at random: every replica ends with the same bytes as an
    /// empty state that takes all the events in a random order, and the set holds exactly what
    /// some addition added and no removal that saw it took away.
    @Test func replicasThatEditTheirOwnViewConverge() throws {
        let policies: [String: MergePolicy] = ["tags": .addWinsSet, "views": .counter]
        let origins = [Self.a, Self.b, Self.c]
        for seed in UInt64(1)...300 {
            var random = SeededGenerator(seed: seed)
            var states = [ItemState](repeating: ItemState(), count: 3)
            var logs: [[Event]] = [[], [], []]
            var sequences: [UInt64] = [0, 0, 0]
            var all: [Event] = []
            var clock: UInt64 = 0
            for _ in 0..<24 {
                let replica = Int(random.next() % 3)
                if random.next() % 3 == 0 {
                    // Receive everything another replica holds.
                    let other = Int(random.next() % 3)
                    for event in logs[other] where !logs[replica].contains(where: { $0.id == event.id }) {
                        states[replica].apply(event)
                        logs[replica].append(event)
                    }
                    continue
                }
                let tag = Value.string(F.tags[Int(random.next() % 4)])
                let change: Change
                switch random.next() % 6 {
                case 0: change = .edit("notes", id: "x", ["tags": .add([tag])])
                case 1: change = .edit("notes", id: "x", ["tags": .remove([tag])])
                case 2: change = .increment("notes", id: "x", field: "views", by: Int64(random.next() % 5) - 2)
                case 3:
                    change = .put(
                        "notes", id: "x",
                        fields: ["title": "t", "tags": [tag], "views": .int(Int64(random.next() % 9))])
                case 4: change = .delete("notes", id: "x")
                default: change = .patch("notes", id: "x", fields: ["tags": [tag, "home"]])
                }
                let parts = try states[replica].eventParts(for: change, policies: policies)
                if change.operation == .patch && parts.fields.isEmpty && parts.updates.isEmpty { continue }
                clock += 1 + random.next() % 3
                sequences[replica] += 1
                let event = Event(
                    id: EventID(origin: origins[replica], sequence: sequences[replica]), hlc: Self.at(clock),
                    base: states[replica].version?.hlc ?? .zero, collection: "notes", item: "x",
                    operation: change.operation, fields: parts.fields, updates: parts.updates)
                states[replica].apply(event)
                logs[replica].append(event)
                all.append(event)
            }
            var shuffled = all
            shuffled.shuffle(using: &random)
            let reference = Self.state(shuffled)
            for replica in 0..<3 {
                for event in all where !logs[replica].contains(where: { $0.id == event.id }) {
                    states[replica].apply(event)
                }
                #expect(states[replica].encoded() == reference.encoded(), "seed \(seed), replica \(replica)")
            }
            // The set holds an element exactly when an addition of it was never named by a removal.
            var removed = Set<String>()
            var added: [(Value, EventID)] = []
            for event in all {
                guard let update = event.updates["tags"] else { continue }
                added += update.add.map { ($0, event.id) }
                for removal in update.remove { for id in removal.seen { removed.insert("\(removal.element) \(id)") } }
            }
            let expected = Set(added.filter { !removed.contains("\($0.0) \($0.1)") }.map(\.0))
            #expect(Set(reference.sets["tags"]?.values ?? []) == expected, "seed \(seed)")
            let bytes = reference.encoded()
            #expect(try bytes.withUnsafeBytes { try ItemState(decoding: $0) } == reference, "seed \(seed): decodes")
        }
    }
}
