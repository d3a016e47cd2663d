import EventStoreTestSupport
import Foundation
import LMDB
import Synchronization
import Testing

@testable import EventStore

/// Rebuild determinism: projections rebuilt from the log are byte-identical to the ones kept up
/// incrementally, and `verify` finds exactly what was damaged by hand.
struct RebuildTests {
    typealias F = ProjectionFixtures

    static let queries = [
        SearchQuery("sync", collection: "notes", limit: 100), SearchQuery("동기화", collection: "notes", limit: 100),
        SearchQuery("오프라인 메", collection: "notes", limit: 100), SearchQuery("meet", limit: 100),
        SearchQuery("", collection: "notes", tags: ["회의"], limit: 100), SearchQuery("garden recipe", limit: 100),
    ]

    /// Random local writes to about 200 items (English and Korean text, tags), interleaved with
    /// events received from two other replicas, under a clock that wanders (backwards too).
    static func workload(_ store: Store, clock: ManualClock, seed: UInt64, rounds: Int = 30) async throws {
        var random = SeededGenerator(seed: seed)
        let remotes = [ReplicaID(high: 9, low: seed), ReplicaID(high: 10, low: seed)]
        var remoteSequence = [UInt64](repeating: 0, count: remotes.count)
        for _ in 0..<rounds {
            clock.advance(by: Int64(random.next() % 400) - 100)
            var changes: [Change] = []
            for _ in 0..<(5 + Int(random.next() % 20)) {
                let collection = random.next() % 4 == 0 ? "tasks" : "notes"
                let id = "n\(random.next() % 200)"
                switch random.next() % 8 {
                case 0: changes.append(.delete(collection, id: id))
                case 1, 2, 3:
                    var fields: [String: Value] = [:]
                    for name in F.fieldNames where random.next() % 2 == 0 { fields[name] = F.value(for: name, &random) }
                    if fields.isEmpty { fields["content"] = F.value(for: "content", &random) }
                    changes.append(.patch(collection, id: id, fields: fields))
                default:
                    changes.append(
                        .put(
                            collection, id: id,
                            fields: [
                                "title": F.value(for: "title", &random), "content": F.value(for: "content", &random),
                                "tags": F.value(for: "tags", &random),
                            ]))
                }
            }
            try await store.append(changes)
            if random.next() % 3 == 0 {
                // Another replica's writes, stamped a little before or after ours.
                let index = Int(random.next() % 2)
                var events: [Event] = []
                for _ in 0..<(1 + Int(random.next() % 6)) {
                    remoteSequence[index] += 1
                    let hlc = HLCTimestamp(
                        physical: clock.now - 500 + random.next() % 1_000, logical: UInt16(remoteSequence[index]))
                    let operation: EventOperation = random.next() % 5 == 0 ? .delete : .patch
                    events.append(
                        F.event(
                            remotes[index], remoteSequence[index], at: hlc, base: .zero, "notes",
                            "n\(random.next() % 200)",
                            operation, ["title": F.value(for: "title", &random), "tags": F.value(for: "tags", &random)])
                    )
                }
                _ = try await store.ingest(events)
            }
        }
    }

    @Test func rebuildingGivesTheSameBytesAndVerifyAgrees() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(configuration: F.configuration(clock: clock)) { store async throws in
            try await Self.workload(store, clock: clock, seed: 17)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            #expect(report.eventsChecked == (try store.head()))
            #expect(report.entriesCompared > report.eventsChecked)
            #expect(try store.count(in: "notes") > 50, "the workload leaves a real collection")
            #expect(try store.read { try $0.conflicts(collection: "notes") }.count > 0, "and some conflicts")

            let bytes = try F.projectionBytes(store)
            let state = try F.state(store)
            let hits = try Self.queries.map { try F.hits(store, $0) }
            #expect(hits.filter { !$0.isEmpty }.count >= 5, "the queries find things")

            let generation = try store.read { try $0.activeGeneration() }
            let progress = Mutex<[Store.Progress]>([])
            try await store.rebuildProjections { update in progress.withLock { $0.append(update) } }
            #expect(
                try store.read { try $0.activeGeneration() } == 1 - generation,
                "the rebuild filled the other generation")
            let head = try store.head()
            let updates = progress.withLock { $0 }
            #expect(updates.last == Store.Progress(processed: head, total: head))
            #expect(updates.map(\.processed) == updates.map(\.processed).sorted())

            #expect(try F.projectionBytes(store) == bytes, "rebuilt projections are byte-identical")
            #expect(try F.state(store) == state)
            #expect(try Self.queries.map { try F.hits(store, $0) } == hits)
            #expect(try store.verify().isConsistent)

            // And back again: the first generation is refilled identically.
            try await store.rebuildProjections()
            #expect(try store.read { try $0.activeGeneration() } == generation)
            #expect(try F.projectionBytes(store) == bytes)
        }
    }

    /// How much a rebuild holds in memory while it replays the log.
    enum Holding: CaseIterable {
        /// Every item of the workload, over chunks of 40 events, indexed from memory.
        case everything
        /// At most 13 items, 40 events per chunk: the replay goes in passes over the log, one
        /// range of about 11 items each; a pass whose items do not fit after all writes their
        /// records to the store and goes on there.
        case fewItems
        /// At most 2 KiB of events, 40 events per chunk: the same, bounded by bytes.
        case fewBytes
    }

    @Test(arguments: [UInt64(1), 2, 3], Holding.allCases)
    func incrementalProjectionsEqualARebuildForAnyWorkload(seed: UInt64, holding: Holding) async throws {
        let clock = ManualClock()
        var configuration = F.configuration(clock: clock)
        configuration.rebuildChunkEvents = 40
        switch holding {
        case .everything: break
        case .fewItems: configuration.replayRecordLimit = 13
        case .fewBytes: configuration.replayRecordBytes = 2_048
        }
        configuration.indexes = [IndexDefinition("notes", fields: ["title"])]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            try await Self.workload(store, clock: clock, seed: seed * 101, rounds: 12)
            let before = try F.projectionBytes(store)
            // Items that do not fit are replayed in passes over the log, one range of items each
            // (a verify's scratch build goes the same way).
            let scratch = try ScratchProjections(configuration: configuration)
            try scratch.build(from: store, through: try store.head(), progress: nil)
            #expect((scratch.passes > 1) == (holding != .everything), "\(scratch.passes) passes")
            let progress = Mutex<[Store.Progress]>([])
            try await store.rebuildProjections { update in progress.withLock { $0.append(update) } }
            let updates = progress.withLock { $0 }
            let head = try store.head()
            #expect(updates.map(\.processed) == updates.map(\.processed).sorted())
            #expect(updates.allSatisfy { $0.total == head } && updates.last?.processed == head)
            let after = try F.projectionBytes(store)
            for name in before.keys.sorted() { #expect(after[name] == before[name], "seed \(seed): \(name) differs") }
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func writesDuringARebuildWaitAndAreKept() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append((0..<300).map { .put("notes", id: "n\($0)", fields: ["title": "sync \($0)"]) })
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.rebuildProjections() }
                for index in 0..<20 {
                    group.addTask { try await store.patch("notes", id: "n\(index)", fields: ["content": "during"]) }
                }
                try await group.waitForAll()
            }
            #expect(try store.head() == 320)
            #expect(try store.item("notes", "n7")?["content"] == "during")
            #expect(try store.verify().isConsistent)
        }
    }

    // MARK: Damage found by verify

    /// Opens the store's environment in this process (the same shared instance) and runs `body`
    /// in a write transaction with the active generation's databases.
    static func tamper(_ store: Store, _ body: (WriteTransaction, (String) throws -> Database) throws -> Void) throws {
        let environment = try Environment.open(path: store.path)
        try environment.write { tx throws in
            let meta = try tx.openDatabase(named: "meta", options: [])
            let generation =
                try tx.value(forKey: Array("store.generation".utf8), in: meta).map { bytes in
                    bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                } ?? 0
            try body(tx) { name in try tx.openDatabase(named: "g\(generation).\(name)", options: []) }
        }
    }

    @Test func verifyNamesExactlyTheItemChangedByHandAndARebuildRepairsIt() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(configuration: F.configuration(clock: clock)) { store async throws in
            try await Self.workload(store, clock: clock, seed: 5, rounds: 15)
            try await store.put("notes", id: "victim", fields: ["title": "오프라인에서 동기화를", "content": "kept"])
            #expect(try store.verify().isConsistent)

            // Change one field's value inside the stored state, keeping the encoding valid.
            try Self.tamper(store) { tx, database throws in
                let items = try database("items")
                let key = Keys.item("notes", "victim")
                var record = try tx.value(forKey: key, in: items)!.withUnsafeBytes { try ItemRecord(decoding: $0) }
                record.state.fields["content"]?.value = "tampered"
                try tx.put(record.encoded(), forKey: key, in: items)
            }
            #expect(try store.item("notes", "victim")?["content"] == "tampered")
            let report = try store.verify()
            #expect(report.problems.count == 1, "\(report.problems)")
            #expect(report.problems.first?.kind == "different")
            #expect(report.problems.first?.database == "items")
            #expect(report.problems.first?.key == "notes/victim")

            try await store.rebuildProjections()
            #expect(try store.item("notes", "victim")?["content"] == "kept")
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func verifyReportsMissingAndUnexpectedEntries() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.put("notes", id: "a", fields: ["title": "sync notes", "tags": ["work"]])
            try await store.put("notes", id: "b", fields: ["title": "garden"])
            try Self.tamper(store) { tx, database throws in
                #expect(try tx.delete(Keys.item("notes", "b"), in: try database("items")))
                try tx.put([1, 2, 3], forKey: Keys.item("notes", "ghost"), in: try database("items"))
            }
            let problems = try store.verify().problems
            // b's search document stays in the index without an item that names it.
            #expect(
                Set(problems.map { "\($0.kind) \($0.database) \($0.key)" }) == [
                    "missing items notes/b", "unexpected items notes/ghost",
                    "stale-posting search_segments notes/garden",
                ])
        }
    }

    @Test func verifyChecksTheLogItself() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append((0..<5).map { .put("notes", id: "n\($0)", fields: ["title": "t"]) })
            let environment = try Environment.open(path: store.path)
            try environment.write { tx throws in
                let events = try tx.openDatabase(named: "events", options: [])
                let third = try tx.value(forKey: Keys.seq(3), in: events)!
                try tx.put(Array(third.prefix(10)), forKey: Keys.seq(3), in: events)  // damaged bytes
            }
            let report = try store.verify()
            #expect(report.problems.contains { $0.kind == "undecodable-event" && $0.key == "3" }, "\(report.problems)")
            #expect(report.eventsChecked == 5)
        }
    }
}
