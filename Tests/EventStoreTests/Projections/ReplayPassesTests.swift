import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// The passes of a replay whose items do not fit in memory: key ranges in order that together
/// hold every item once, each within the records a pass may hold; one pass when the items fit;
/// one when custom projections see the events or an upcaster can move events between items; a
/// replay to an earlier point builds in passes what it builds in one.
struct ReplayPassesTests {
    /// The plan for `store`'s active generation and log.
    static func plan(_ store: Store, limit: Int, byteLimit: Int = 64 << 20) throws -> ReplayPasses {
        try store.read { reader in
            try ReplayPasses.plan(
                items: store.schema.generations[try reader.activeGeneration()].items, events: store.schema.events,
                tx: reader.tx, limit: limit, byteLimit: byteLimit)
        }
    }

    /// The item keys of `store`'s active generation, in key order.
    static func itemKeys(_ store: Store) throws -> [[UInt8]] {
        try store.read { reader in
            var keys: [[UInt8]] = []
            try ItemRecord.forEach(in: store.schema.generations[try reader.activeGeneration()].items, tx: reader.tx) {
                key, _ in
                keys.append(Array(key))
                return true
            }
            return keys
        }
    }

    @Test func rangesHoldEveryItemOnceAndNoMoreThanAPassHolds() async throws {
        try await withTemporaryStore { store async throws in
            try await store.append((0..<1_000).map { .put("notes", id: "n\($0)", fields: ["n": .int(Int64($0))]) })
            let passes = try Self.plan(store, limit: 100)
            // 1,000 items at seven eighths of 100 a pass.
            #expect(passes.ranges.count == 12)
            #expect(passes.ranges.first?.lower == nil && passes.ranges.last?.upper == nil)
            for (range, next) in zip(passes.ranges, passes.ranges.dropFirst()) {
                #expect(range.upper != nil && range.upper == next.lower, "the ranges meet")
            }
            let keys = try Self.itemKeys(store)
            for key in keys { #expect(passes.ranges.filter { $0.contains(key) }.count == 1) }
            for range in passes.ranges { #expect(keys.filter { range.contains($0) }.count <= 100) }
        }
    }

    @Test func onePassWhenTheItemsAndTheLogFit() async throws {
        try await withTemporaryStore { store async throws in
            #expect(try Self.plan(store, limit: 100) == .single, "an empty store")
            try await store.append((0..<50).map { .put("notes", id: "n\($0)", fields: ["n": .int(Int64($0))]) })
            #expect(try Self.plan(store, limit: 100) == .single)
            // The log's bytes count too: its page holds more than 1 KiB.
            #expect(try Self.plan(store, limit: 100, byteLimit: 1_024).ranges.count > 1)
        }
    }

    @Test func upcastersThatMoveEventsRuleOutPasses() {
        var renames = CollectionSchema("notes", version: 2)
        renames.upcast(from: 1, [.renameField("title", to: "name")])
        var moves = CollectionSchema("notes", version: 2)
        moves.upcast(from: 1, [.moveToCollection("archive")])
        var code = CollectionSchema("notes", version: 2)
        code.upcast(from: 1) { $0.fields["name"] = $0.fields["title"] }
        #expect(SchemaRegistry(schemas: [renames], recorded: []).keepsItemKeys)
        #expect(!SchemaRegistry(schemas: [moves], recorded: []).keepsItemKeys)
        #expect(!SchemaRegistry(schemas: [code], recorded: []).keepsItemKeys)
        #expect(SchemaRegistry.none.keepsItemKeys)
    }
}

extension ReplayPassesTests {
    /// The item ids of `store` in each range of `passes`.
    static func idsByRange(_ store: Store, _ passes: ReplayPasses) throws -> [[String]] {
        let keys = try itemKeys(store)
        return passes.ranges.map { range in
            keys.filter { range.contains($0) }.map {
                String(decoding: $0.split(separator: 0, maxSplits: 1)[1], as: UTF8.self)
            }
        }
    }

    @Test func rangesAreEvenWhenItemsHaveLongHistories() async throws {
        try await withTemporaryStore { store async throws in
            // 40 items of 40 events: each record is followed by two history chunks in `items`.
            for round in 0..<40 {
                try await store.append((0..<40).map { .put("notes", id: "n\($0)", fields: ["n": .int(Int64(round))]) })
            }
            let bytes = try store.read { try $0.tx.statistics(of: store.schema.events).bytes }
            // The log's bytes ask for four passes: four ranges of ten items.
            let byBytes = try Self.plan(store, limit: 1_000, byteLimit: bytes / 4 + 1)
            #expect(try Self.idsByRange(store, byBytes).map(\.count) == [10, 10, 10, 10])
            // 40 items at 7 a pass (limit 8): six ranges of at most seven.
            let byItems = try Self.idsByRange(store, try Self.plan(store, limit: 8))
            #expect(byItems.count == 6 && byItems.allSatisfy { $0.count <= 7 })
            #expect(byItems.flatMap { $0 }.count == 40)
        }
    }

    @Test func passesAreBoundedInNumber() async throws {
        try await withTemporaryStore { store async throws in
            try await store.append((0..<200).map { .put("notes", id: "n\($0)", fields: ["n": .int(Int64($0))]) })
            let passes = try Self.plan(store, limit: 1)
            #expect(passes.ranges.count == ReplayPasses.maximumCount)
            #expect(try Self.idsByRange(store, passes).flatMap { $0 }.count == 200)
        }
    }

    /// A pass whose items do not fit after all (here the first: its items carry most of the
    /// log's bytes, which the plan does not know) writes their records to the store and goes on
    /// there; the next pass holds its own. The build equals incremental maintenance's.
    @Test func aPassWhoseItemsDoNotFitGoesOnInTheStore() async throws {
        var configuration = ProjectionFixtures.configuration()
        configuration.rebuildChunkEvents = 16
        try await withTemporaryStore(configuration: configuration) { store async throws in
            let long = String(repeating: "words of a long note ", count: 20)
            for round in 0..<12 {
                try await store.append(
                    (0..<10).map { .put("notes", id: "a\($0)", fields: ["title": .string("\(round) \(long)")]) })
            }
            try await store.append((0..<10).map { .put("notes", id: "b\($0)", fields: ["title": "short"]) })
            let bytes = try store.read { try $0.tx.statistics(of: store.schema.events).bytes }
            configuration.replayRecordBytes = bytes / 2 + 1
            let scratch = try ScratchProjections(configuration: configuration)
            try scratch.build(from: store, through: try store.head(), progress: nil)
            #expect(scratch.passes == 2)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems.prefix(3))")
            #expect(
                try ProjectionFixtures.scratchContents(scratch)
                    == ProjectionFixtures.scratchContents(try Self.scratch(store)))
        }
    }

    /// A scratch build of `store` in one pass, holding every record.
    static func scratch(_ store: Store) throws -> ScratchProjections {
        let scratch = try ScratchProjections(configuration: store.configuration)
        try scratch.build(from: store, through: try store.head(), progress: nil)
        #expect(scratch.passes == 1)
        return scratch
    }

    @Test func customProjectionsReplayInOnePass() async throws {
        var configuration = ProjectionFixtures.configuration()
        configuration.replayRecordLimit = 8
        configuration.projections = [CustomProjectionTests.NotesPerTag()]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            try await store.append(
                (0..<100).map { .put("notes", id: "n\($0)", fields: ["tags": .array([.string("t\($0 % 3)")])]) })
            let custom = try ScratchProjections(configuration: configuration)
            try custom.build(from: store, through: try store.head(), progress: nil)
            #expect(custom.passes == 1)
            configuration.projections = []
            let plain = try ScratchProjections(configuration: configuration)
            try plain.build(from: store, through: try store.head(), progress: nil)
            #expect(plain.passes > 1)
        }
    }
}

extension ReplayPassesTests {
    /// A replay to an earlier point (``Store/replay(to:progress:)``: the events up to a seq, or
    /// those stamped up to a time, whatever their seq) builds in passes what it builds in one.
    @Test(arguments: [false, true])
    func aReplayToAPointBuildsInPassesWhatItBuildsInOne(byTime: Bool) async throws {
        let clock = ManualClock()
        var configuration = ProjectionFixtures.configuration(clock: clock)
        configuration.rebuildChunkEvents = 25
        try await withTemporaryStore(configuration: configuration) { store async throws in
            for round in 0..<8 {
                clock.advance(by: 1_000)
                try await store.append(
                    (0..<40).map {
                        .put(
                            "notes", id: "n\(($0 * 7 + round) % 60)", fields: ["title": .string("round \(round) \($0)")]
                        )
                    })
            }
            let middle = try store.read { try $0.event(at: 170)?.hlc } ?? .zero
            let point: ReplayPoint = byTime ? .hlc(middle) : .seq(170)
            let through = byTime ? try store.head() : 170
            var small = configuration
            small.replayRecordLimit = 8
            let inPasses = try ScratchProjections(configuration: small)
            let applied = try inPasses.build(from: store, through: through, include: point.includes, progress: nil)
            #expect(inPasses.passes > 1)
            let inOne = try ScratchProjections(configuration: configuration)
            #expect(try inOne.build(from: store, through: through, include: point.includes, progress: nil) == applied)
            #expect(inOne.passes == 1)
            #expect(try ProjectionFixtures.scratchContents(inPasses) == ProjectionFixtures.scratchContents(inOne))
            let head = try store.head()
            #expect(applied > 0 && applied < head)
        }
    }
}
