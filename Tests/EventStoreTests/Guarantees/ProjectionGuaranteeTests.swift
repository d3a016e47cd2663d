import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// The projections' promises: order-independent merge, rebuild determinism, conflicts, custom
/// projections, change stream, replay.
struct ProjectionGuaranteeTests {
    /// A random history of one item: several origins, equal physical times, puts/patches/deletes.
    static func history(seed: UInt64, count: Int = 12) -> [Event] {
        var random = SeededGenerator(seed: seed)
        let origins = (0..<3).map { ReplicaID(high: UInt64($0 + 1), low: seed) }
        var sequences = [UInt64](repeating: 0, count: origins.count)
        let fieldNames = ["title", "content", "tags", "done"]
        return (0..<count).map { _ in
            let origin = Int(random.next() % 3)
            sequences[origin] += 1
            let roll = random.next() % 10
            let operation: EventOperation = roll < 3 ? .put : (roll < 9 ? .patch : .delete)
            var fields: [String: Value] = [:]
            if operation != .delete {
                for name in fieldNames
                where random.next() % 2 == 0 || (operation == .patch && fields.isEmpty && name == "done") {
                    fields[name] = .int(Int64(random.next() % 5))
                }
            }
            // Equal physical times across origins; one origin never repeats a stamp (its clock ticks).
            let hlc = HLCTimestamp(physical: 1_800_000_000_000 + random.next() % 2, logical: UInt16(sequences[origin]))
            return Event(
                id: EventID(origin: origins[origin], sequence: sequences[origin]), hlc: hlc,
                base: HLCTimestamp(physical: 1_800_000_000_000, logical: 0), collection: "notes", item: "x",
                operation: operation, fields: fields)
        }
    }

    /// 1,000 histories from a fresh base seed each run (printed on failure; set `EVENTSTORE_SEED`
    /// to replay one run), so that every run tries new histories.
    @Test func mergeDependsOnlyOnTheSetOfEvents() {
        let base =
            ProcessInfo.processInfo.environment["EVENTSTORE_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0..<(UInt64.max / 2))
        for seed in base..<(base + 1_000) {
            let events = ProjectionGuaranteeTests.history(seed: seed)
            var reference = ItemState()
            for event in events { reference.apply(event) }
            var random = SeededGenerator(seed: seed &* 31)
            for _ in 0..<5 {
                var state = ItemState()
                let shuffled = events.shuffled(using: &random)
                for event in shuffled + shuffled.prefix(3) { state.apply(event) }  // duplicates change nothing
                #expect(state.encoded() == reference.encoded(), "seed \(seed) (replay: EVENTSTORE_SEED=\(base))")
            }
        }
    }

    @Test func storesThatIngestTheSameEventsInAnyOrderAgree() async throws {
        for seed in UInt64(1)...15 {
            var events: [Event] = []
            for item in 0..<4 {
                events += ProjectionGuaranteeTests.history(seed: seed * 10 + UInt64(item)).map { event in
                    var event = event
                    event.item = "item\(item)"
                    if event.operation != .delete {
                        event.fields["content"] = .string("offline sync note \(item) 동기화를")
                    }
                    return event
                }
            }
            // Event ids must be unique across items: renumber per origin.
            var next: [ReplicaID: UInt64] = [:]
            for index in events.indices {
                next[events[index].id.origin, default: 0] += 1
                events[index].id.sequence = next[events[index].id.origin]!
            }
            var random = SeededGenerator(seed: seed)
            var snapshots: [[Item]] = []
            var searches: [[String]] = []
            for _ in 0..<3 {
                let directory = TemporaryDirectory()
                defer { directory.remove() }
                var configuration = Store.Configuration()
                configuration.physicalClock = { 1_800_000_000_000 }
                let store = try Store.open(at: directory.path, configuration: configuration)
                for chunk in events.shuffled(using: &random).chunked(into: 7) { _ = try await store.ingest(chunk) }
                snapshots.append(try store.read { try $0.items(in: "notes", limit: 100).items })
                searches.append(try store.search("동기화", in: "notes").map(\.item.id))
                #expect(try store.verify().isConsistent)
                store.close()
            }
            #expect(snapshots.allSatisfy { $0 == snapshots[0] }, "seed \(seed)")
            #expect(searches.allSatisfy { $0 == searches[0] }, "seed \(seed)")
        }
    }

    @Test func rebuildIsByteIdenticalAndVerifyFindsACorruptedItem() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SeededGenerator(seed: 7)
        let words = ["sync", "offline", "merge", "clock", "동기화를", "오프라인에서", "메모", "event", "range", "search"]
        do {
            let store = try Store.open(at: directory.path)
            for round in 0..<20 {
                var changes: [Change] = []
                for _ in 0..<20 {
                    let id = "n\(random.next() % 200)"
                    let text = (0..<6).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(
                        separator: " ")
                    switch random.next() % 6 {
                    case 0: changes.append(.delete("notes", id: id))
                    case 1, 2: changes.append(.patch("notes", id: id, fields: ["content": .string(text)]))
                    default:
                        changes.append(
                            .put(
                                "notes", id: id, fields: ["title": .string(text), "tags": [.string(words[round % 3])]]))
                    }
                }
                try await store.append(changes)
            }
            #expect(try store.verify().isConsistent)
            let before = try store.read { try $0.items(in: "notes", limit: 1_000).items }
            let hits = try store.search("sync off", in: "notes", limit: 50).map(\.item.id)
            try await store.rebuildProjections()
            #expect(try store.read { try $0.items(in: "notes", limit: 1_000).items } == before)
            #expect(try store.search("sync off", in: "notes", limit: 50).map(\.item.id) == hits)
            #expect(try store.verify().isConsistent)
            store.close()
        }
        // Corrupt one item by hand: give it another item's state (keeping its own search doc id,
        // which the search audit checks on its own).
        let environment = try Environment.open(path: directory.path)
        let (victim, other) = try environment.write { tx -> (String, [UInt8]) in
            let meta = try tx.openDatabase(named: "meta", options: [])
            let generation = try tx.value(forKey: Array("store.generation".utf8), in: meta)!.last!
            let items = try tx.openDatabase(named: "g\(generation).items", options: [])
            var keys: [[UInt8]] = []
            try ItemRecord.forEach(in: items, tx: tx) { key, _ in
                keys.append(Array(key))
                return keys.count < 2
            }
            var donor = try tx.value(forKey: keys[1], in: items)!.withUnsafeBytes { try ItemRecord(decoding: $0) }
            donor.searchDocument = try tx.value(forKey: keys[0], in: items)!.withUnsafeBytes {
                try ItemRecord(decoding: $0).searchDocument
            }
            try tx.put(donor.encoded(), forKey: keys[0], in: items)
            return (
                String(decoding: keys[0], as: UTF8.self).replacingOccurrences(of: "\u{0}", with: "/"), donor.encoded()
            )
        }
        #expect(!other.isEmpty)
        let store = try Store.open(at: directory.path)
        defer { store.close() }
        let report = try store.verify()
        #expect(!report.isConsistent)
        #expect(report.problems.map(\.key) == [victim])
        #expect(report.problems.first?.kind == "different" && report.problems.first?.database == "items")
    }

    @Test func concurrentEditsRecordAConflictSequentialOnesDoNot() async throws {
        let a = TemporaryDirectory()
        let b = TemporaryDirectory()
        defer {
            a.remove()
            b.remove()
        }
        let phone = try Store.open(at: a.path)
        let laptop = try Store.open(at: b.path)
        defer {
            phone.close()
            laptop.close()
        }
        let created = try await phone.put("notes", id: "n1", fields: ["title": "Draft"])
        _ = try await laptop.ingest([created])
        // Concurrent: neither has seen the other's edit.
        let early = try await phone.patch("notes", id: "n1", fields: ["title": "Phone title"])
        try await Task.sleep(for: .milliseconds(5))
        let late = try await laptop.patch("notes", id: "n1", fields: ["title": "Laptop title"])
        _ = try await phone.ingest([late])
        _ = try await laptop.ingest([early])
        for store in [phone, laptop] {
            #expect(try store.item("notes", "n1")?["title"] == "Laptop title")
            let conflicts = try store.read { try $0.conflicts(collection: "notes", item: "n1") }
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.winner.event == late.id && conflicts.first?.loser.event == early.id)
            #expect(conflicts.first?.loser.value == "Phone title")
        }
        // Sequential: the laptop saw the phone's edit before editing.
        let seen = try await phone.patch("notes", id: "n1", fields: ["title": "Phone again"])
        _ = try await laptop.ingest([seen])
        let after = try await laptop.patch("notes", id: "n1", fields: ["title": "Laptop after seeing it"])
        _ = try await phone.ingest([after])
        for store in [phone, laptop] {
            #expect(try store.read { try $0.conflicts(collection: "notes", item: "n1") }.count == 1)
            #expect(try store.item("notes", "n1")?["title"] == "Laptop after seeing it")
        }
        let history = try laptop.history(collection: "notes", item: "n1", field: "title")
        #expect(history.filter(\.won).map(\.event.id) == [after.id])
    }

    @Test func aCustomProjectionMatchesTheItemsBeforeAndAfterRebuild() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Store.Configuration()
        configuration.projections = [TagCounts()]
        var random = SeededGenerator(seed: 3)
        let tags = ["home", "work", "travel", "집"]
        func check(_ store: Store) throws {
            let (items, stored) = try store.read { reader in
                (
                    try reader.items(in: "notes", limit: 10_000).items,
                    try reader.projectionEntries(projection: "tag-counts", database: "counts")
                )
            }
            var expected: [String: Int64] = [:]
            for item in items {
                for tag in Set(item["tags"]?.arrayValue?.compactMap(\.stringValue) ?? []) {
                    expected[tag, default: 0] += 1
                }
            }
            let actual = Dictionary(
                uniqueKeysWithValues: stored.map { (String(decoding: $0.key, as: UTF8.self), Counter.decode($0.value)) }
            )
            #expect(actual == expected)
        }
        do {
            let store = try Store.open(at: directory.path, configuration: configuration)
            for _ in 0..<30 {
                var changes: [Change] = []
                for _ in 0..<10 {
                    let id = "n\(random.next() % 40)"
                    switch random.next() % 5 {
                    case 0: changes.append(.delete("notes", id: id))
                    case 1:
                        changes.append(
                            .patch("notes", id: id, fields: ["tags": [.string(tags[Int(random.next() % 4)])]]))
                    default:
                        let picked = tags.filter { _ in random.next() % 2 == 0 }.map(Value.string)
                        changes.append(.put("notes", id: id, fields: ["title": "t", "tags": .array(picked)]))
                    }
                }
                try await store.append(changes)
            }
            try check(store)
            try await store.rebuildProjections()
            try check(store)
            #expect(try store.verify().isConsistent)
            store.close()
        }
        // A new version rebuilds at open.
        configuration.projections = [TagCounts(version: 2)]
        let reopened = try Store.open(at: directory.path, configuration: configuration)
        defer { reopened.close() }
        try check(reopened)
        #expect(try reopened.verify().isConsistent)
    }

    @Test func changesCatchUpThenFollowLiveCommits() async throws {
        try await withTemporaryStore { store in
            for index in 1...10 { try await store.put("notes", id: "n\(index)", fields: ["i": .int(Int64(index))]) }
            let writer = Task {
                for index in 11...40 {
                    try await store.put("notes", id: "n\(index)", fields: ["i": .int(Int64(index))])
                }
            }
            var seen: [UInt64] = []
            for try await change in store.changes(after: 4) {
                seen.append(change.seq)
                if change.seq == 40 { break }
            }
            try await writer.value
            #expect(seen == Array(5...40))
        }
    }

    @Test func replayAtASeqEqualsTheStateThen() async throws {
        try await withTemporaryStore { store in
            var expected: [UInt64: [String: [String: Value]]] = [:]
            var model: [String: [String: Value]] = [:]
            var random = SeededGenerator(seed: 11)
            for _ in 0..<60 {
                let id = "n\(random.next() % 8)"
                let event: Event
                switch random.next() % 4 {
                case 0:
                    event = try await store.delete("notes", id: id)
                    model[id] = nil
                case 1:
                    let value = Value.int(Int64(random.next() % 100))
                    event = try await store.patch("notes", id: id, fields: ["n": value])
                    model[id, default: [:]]["n"] = value
                default:
                    let fields: [String: Value] = ["title": .string("t\(random.next() % 100)")]
                    event = try await store.put("notes", id: id, fields: fields)
                    model[id] = fields
                }
                expected[event.seq] = model
            }
            for seq in [UInt64(1), 17, 33, 60] {
                let replayed = try store.replay(to: .seq(seq)).items(in: "notes")
                let state = Dictionary(uniqueKeysWithValues: replayed.map { ($0.id, $0.fields) })
                #expect(state == expected[seq], "seq \(seq)")
            }
        }
    }
}

extension Array {
    func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
