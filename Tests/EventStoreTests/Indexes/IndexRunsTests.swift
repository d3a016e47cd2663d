import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// The declared indexes' storage (``IndexRuns``): a key is decided by the newest run holding
/// it, merges keep what the runs meant, and the runs stay few however commits are sized.
struct IndexRunsTests {
    /// Runs `body` in a write transaction of a new store's first generation, whose `indexes`
    /// database is empty.
    static func withIndexDatabase(
        _ body: (WriteTransaction, _ database: Database, _ state: Database) throws -> Void
    ) throws {
        var configuration = Store.Configuration()
        configuration.indexes = [IndexDefinition("tasks", fields: ["due"])]
        try withTemporaryStore(configuration: configuration) { store in
            let databases = store.schema.generations[0]
            let database = try #require(databases.indexes)
            try store.environment.write { tx in try body(tx, database, databases.state) }
        }
    }

    static func key(_ text: String) -> [UInt8] { [0, 0, 0, 9] + Array(text.utf8) }

    /// Calls `body` with a walk over the runs the directory in `state` lists, from `start` to
    /// `end` (`nil`: the end of index 9's keys).
    static func withWalk<T>(
        _ tx: ReadTransaction, _ database: Database, _ state: Database, from start: String, to end: String?,
        descending: Bool, _ body: (inout IndexRunWalk) throws -> T
    ) throws -> T {
        try IndexRunWalk.withWalk(
            overRunsListedIn: state, in: database, tx: tx, start: key(start), end: end.map(key) ?? [0, 0, 0, 10],
            descending: descending, body)
    }

    /// The text of an entry key of index 9.
    static func text(_ key: UnsafeRawBufferPointer) -> String { String(decoding: key.dropFirst(4), as: UTF8.self) }

    static func live(
        _ tx: ReadTransaction, _ database: Database, _ state: Database, from start: String = "", to end: String? = nil,
        descending: Bool = false
    ) throws -> [String] {
        try withWalk(tx, database, state, from: start, to: end, descending: descending) { walk in
            var keys: [String] = []
            try walk.forEachLive { key in
                keys.append(text(key))
                return true
            }
            return keys
        }
    }

    static func write(
        _ entries: [(String, Bool)], _ tx: WriteTransaction, _ database: Database, _ state: Database,
        budget: UInt64? = nil
    ) throws {
        try IndexRuns.write(entries.map { (key($0.0), $0.1) }, tx: tx, database: database, state: state, budget: budget)
    }

    /// Every stored entry, block by block: its run, its key's text and whether it is a tombstone.
    static func raw(_ tx: ReadTransaction, _ database: Database) throws -> [(run: UInt32, key: String, dead: Bool)] {
        var entries: [(run: UInt32, key: String, dead: Bool)] = []
        let block = IndexRunBlock.Decoded()
        try tx.forEach(in: database) { key, value in
            let run = key.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            try IndexRunBlock.decode(first: UnsafeRawBufferPointer(rebasing: key[4...]), value: value, into: block)
            for (index, entry) in block.entries.enumerated() {
                let text = block.withKey(index) { String(decoding: $0.dropFirst(4), as: UTF8.self) }
                entries.append((run, text, !entry.live))
            }
            return true
        }
        return entries
    }

    @Test func theNewestRunHoldingAKeyDecidesIt() throws {
        try Self.withIndexDatabase { tx, database, state in
            try Self.write([("a", true), ("b", true), ("c", true)], tx, database, state)
            try Self.write([("b", false), ("d", true)], tx, database, state)
            try Self.write([("b", true), ("c", false)], tx, database, state)
            #expect(try Self.live(tx, database, state) == ["a", "b", "d"])
            #expect(try Self.live(tx, database, state, descending: true) == ["d", "b", "a"])
            #expect(try Self.live(tx, database, state, from: "b", to: "d") == ["b"])
            #expect(try Self.live(tx, database, state, from: "b", to: "d", descending: true) == ["b"])
            #expect(try Self.live(tx, database, state, from: "c") == ["d"])
            #expect(try IndexRunDirectory.load(tx: tx, state: state).runs.map(\.entries) == [3, 2, 2])
        }
    }

    @Test func mergesKeepTombstonesOverOlderRunsAndDropThemAtTheOldest() throws {
        try Self.withIndexDatabase { tx, database, state in
            try Self.write([("a", true), ("b", true), ("c", true)], tx, database, state)
            try Self.write([("b", false), ("d", true)], tx, database, state)
            try Self.write([("b", true), ("c", false)], tx, database, state)
            var directory = try IndexRunDirectory.load(tx: tx, state: state)
            // The two newer runs: b is live (the newest says so), c's tombstone stays, since the
            // oldest run still holds c.
            try IndexRuns.merge(1..<3, of: &directory, tx: tx, database: database)
            try directory.save(tx: tx, state: state)
            #expect(directory.runs.map(\.entries) == [3, 3])
            #expect(try Self.live(tx, database, state) == ["a", "b", "d"])
            let merged = try Self.raw(tx, database).filter { $0.run == directory.runs[1].id }
            #expect(merged.map(\.key) == ["b", "c", "d"])
            #expect(merged.map(\.dead) == [false, true, false])
            // With the oldest run, nothing is left for a tombstone to hide.
            try IndexRuns.merge(0..<2, of: &directory, tx: tx, database: database)
            try directory.save(tx: tx, state: state)
            #expect(directory.runs.map(\.entries) == [3])
            #expect(try Self.raw(tx, database).map(\.key) == ["a", "b", "d"])
            #expect(try Self.raw(tx, database).allSatisfy { !$0.dead && $0.run == directory.runs[0].id })
            #expect(try Self.live(tx, database, state) == ["a", "b", "d"])
        }
    }

    @Test func eightRunsOfATierBecomeOne() throws {
        try Self.withIndexDatabase { tx, database, state in
            for number in 0..<8 { try Self.write([("k\(number)", true)], tx, database, state) }
            var directory = try IndexRunDirectory.load(tx: tx, state: state)
            #expect(directory.runs.map(\.entries) == [8], "the eighth single-entry run merged all eight")
            for number in 8..<71 { try Self.write([("k\(number)", true)], tx, database, state) }
            directory = try IndexRunDirectory.load(tx: tx, state: state)
            // 71 = 64 + 7: one run of 64 (eight runs of 8 merged), seven single-entry runs.
            #expect(directory.runs.map(\.entries) == [64, 1, 1, 1, 1, 1, 1, 1])
            #expect(try Self.live(tx, database, state) == (0..<71).map { "k\($0)" }.sorted())
            #expect(try Self.raw(tx, database).count == 71)
        }
    }

    /// Commits of very different sizes, interleaved, never fill a tier: the run count still
    /// stays at or below ``IndexRunDirectory/maxRuns``.
    @Test func interleavedSizesStillMerge() throws {
        try Self.withIndexDatabase { tx, database, state in
            var expected = Set<String>()
            for round in 0..<120 {
                let size = round % 2 == 0 ? 1 : 9
                let entries = (0..<size).map { ("r\(round)-\($0)", true) }
                expected.formUnion(entries.map(\.0))
                try Self.write(entries, tx, database, state)
                let runs = try IndexRunDirectory.load(tx: tx, state: state).runs
                #expect(runs.count <= IndexRunDirectory.maxRuns)
            }
            #expect(try Self.live(tx, database, state) == expected.sorted(by: { utf8Less($0, $1) }))
        }
    }

    @Test func runIDsStartOverWhenTheyRunOut() throws {
        try Self.withIndexDatabase { tx, database, state in
            try Self.write([("a", true), ("b", true)], tx, database, state)
            try Self.write([("a", false), ("c", true)], tx, database, state)
            var directory = try IndexRunDirectory.load(tx: tx, state: state)
            directory.nextRun = IndexRuns.lastRunID + 1
            try directory.save(tx: tx, state: state)
            try Self.write([("d", true)], tx, database, state)
            directory = try IndexRunDirectory.load(tx: tx, state: state)
            #expect(directory.runs.map(\.id) == [0, 1], "every run merged into run 0, then the new run 1")
            #expect(directory.nextRun == 2)
            #expect(try Self.live(tx, database, state) == ["b", "c", "d"])
        }
    }

    /// Entries share blocks of about ``IndexRunBlock/targetBytes``, never across two indexes,
    /// and a walk that starts or ends inside a block finds its place there.
    @Test func blocksHoldManyEntriesOfOneIndexAndWalksSeekInsideThem() throws {
        try Self.withIndexDatabase { tx, database, state in
            let keys = (0..<500).map { "k" + String(String(10_000 + $0).dropFirst()) }
            var entries = keys.map { (key: Self.key($0), live: true) }
            // A second index's entries after the first's.
            entries += (0..<20).map { (key: [0, 0, 0, 10] + Array("z\($0)".utf8), live: true) }
            try IndexRuns.write(
                entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }, tx: tx, database: database, state: state)
            var blocks: [[UInt8]] = []
            try tx.forEach(in: database) { key, value in
                #expect(value.count < IndexRunBlock.targetBytes + 32)
                blocks.append(Array(key))
                return true
            }
            #expect(blocks.count > 3 && blocks.count < 60, "\(blocks.count) blocks for 520 entries")
            #expect(
                blocks.contains { $0[4..<8].elementsEqual([0, 0, 0, 10]) && $0.count == 8 + 2 }, "z0 opens a block")
            #expect(try Self.raw(tx, database).count == 520)
            #expect(try Self.live(tx, database, state, from: "k0123", to: "k0126") == ["k0123", "k0124", "k0125"])
            #expect(
                try Self.live(tx, database, state, from: "k0122x", to: "k0125x", descending: true)
                    == ["k0125", "k0124", "k0123"])
            #expect(try Self.live(tx, database, state, from: "k0499") == ["k0499"])
            #expect(try Self.live(tx, database, state, to: "k0001") == ["k0000"])
            #expect(try Self.live(tx, database, state).count == 500)
            // Dropping the first index deletes its blocks and keeps the other's.
            try IndexRuns.drop(indexPrefix: [0, 0, 0, 9], tx: tx, database: database, state: state)
            #expect(try Self.raw(tx, database).map(\.key) == (0..<20).map { "z\($0)" }.sorted())
            #expect(try IndexRunDirectory.load(tx: tx, state: state).runs.map(\.entries) == [20])
        }
    }

    @Test func blocksThatDoNotDecodeAreCorrupt() throws {
        let first = Array("abc".utf8)
        let decoded = IndexRunBlock.Decoded()
        for bad in [
            [],  // no entry
            [2, 0],  // the first entry does not share the block's key
            [3, 2, 9],  // the first entry has a suffix
            [3, 0, 3, 2],  // a suffix longer than the value
            [3, 0, 1, 2, 0x61],  // "aa" after "abc": out of order
            [3, 0, 4, 2, 0x61],  // shares more than the previous key has
        ] as [[UInt8]] {
            #expect(throws: EventStoreError.self) {
                try first.withUnsafeBytes { first in
                    try bad.withUnsafeBytes { try IndexRunBlock.decode(first: first, value: $0, into: decoded) }
                }
            }
        }
        // "abc" live, then "abd" dead.
        try first.withUnsafeBytes { first in
            try ([3, 0, 2, 3, 0x64] as [UInt8]).withUnsafeBytes {
                try IndexRunBlock.decode(first: first, value: $0, into: decoded)
            }
        }
        #expect(decoded.entries.map(\.live) == [true, false])
        #expect(decoded.withKey(1) { Array($0) } == Array("abd".utf8))
    }

    /// A merge larger than a commit's budget is copied over the following commits while queries
    /// read its inputs, then takes their place; changes made meanwhile stay on top of it.
    @Test func aLargeMergeIsSpreadOverTheFollowingCommits() throws {
        try Self.withIndexDatabase { tx, database, state in
            var expected = Set<String>()
            for run in 0..<8 {
                let entries = (0..<10).map { ("r\(run)-\($0)", true) }
                expected.formUnion(entries.map(\.0))
                try Self.write(entries, tx, database, state, budget: 25)
            }
            var directory = try IndexRunDirectory.load(tx: tx, state: state)
            let merge = try #require(directory.merge, "80 entries do not fit a budget of 25")
            #expect(merge.inputs.count == 8)
            #expect(merge.written == 25)
            #expect(directory.runs.count == 8, "the inputs stay runs until the merge completes")
            #expect(try Self.live(tx, database, state) == expected.sorted(by: utf8Less))
            // Commits go on: one deletes an input's entry, one adds an entry.
            try Self.write([("r3-4", false)], tx, database, state, budget: 25)
            expected.remove("r3-4")
            #expect(try Self.live(tx, database, state) == expected.sorted(by: utf8Less))
            try Self.write([("s", true)], tx, database, state, budget: 25)
            expected.insert("s")
            #expect(try IndexRunDirectory.load(tx: tx, state: state).merge?.written == 75)
            #expect(try Self.live(tx, database, state) == expected.sorted(by: utf8Less))
            try Self.write([("t", true)], tx, database, state, budget: 25)
            expected.insert("t")
            directory = try IndexRunDirectory.load(tx: tx, state: state)
            #expect(directory.merge == nil, "the fourth commit copied the last 5 entries")
            #expect(directory.runs.map(\.entries) == [80, 1, 1, 1])
            #expect(try Self.live(tx, database, state) == expected.sorted(by: utf8Less))
            #expect(try Self.raw(tx, database).count == 83, "the inputs are deleted")
        }
    }

    @Test func droppingAnIndexAbandonsTheMergeUnderWay() throws {
        try Self.withIndexDatabase { tx, database, state in
            for run in 0..<8 {
                try Self.write((0..<10).map { ("r\(run)-\($0)", true) }, tx, database, state, budget: 25)
            }
            #expect(try IndexRunDirectory.load(tx: tx, state: state).merge != nil)
            try IndexRuns.drop(indexPrefix: [0, 0, 0, 9], tx: tx, database: database, state: state)
            let directory = try IndexRunDirectory.load(tx: tx, state: state)
            #expect(directory.merge == nil && directory.runs.isEmpty)
            #expect(try Self.raw(tx, database).isEmpty)
        }
    }

    @Test func directoriesRoundTripAndBadBytesAreCorrupt() throws {
        var directory = IndexRunDirectory()
        directory.nextRun = 300
        directory.runs = [.init(id: 7, entries: 70_000), .init(id: 299, entries: 1)]
        let bytes = directory.encoded()
        #expect(try bytes.withUnsafeBytes { try IndexRunDirectory(decoding: $0) } == directory)
        directory.merge = .init(inputs: [7, 299], output: 12, written: 9, resumeAfter: [1, 2, 3])
        let merging = directory.encoded()
        #expect(try merging.withUnsafeBytes { try IndexRunDirectory(decoding: $0) } == directory)
        for bad in [
            [], [2, 1, 0], Array(bytes.dropLast()), bytes + [0],
            [1, 5, 1, 5, 1, 0],  // a run id at the next id
            [1, 5, 2, 1, 1, 1, 1, 0],  // a run listed twice
            [1, 5, 2, 1, 1, 2, 1, 2],  // an unknown merge flag
            [1, 5, 3, 1, 1, 2, 1, 3, 1, 1, 2, 1, 3, 4, 0, 0],  // inputs that are not adjacent
            [1, 5, 2, 1, 1, 2, 1, 1, 2, 2, 1, 2, 0, 0],  // inputs out of order
            [1, 5, 2, 1, 1, 2, 1, 1, 2, 1, 2, 2, 0, 0],  // an output that is a live run
            Array(merging.dropLast()),
        ] as [[UInt8]] {
            #expect(throws: EventStoreError.self) { try bad.withUnsafeBytes { try IndexRunDirectory(decoding: $0) } }
        }
    }

    /// Through the store: many small commits that update and delete, then a query, a count,
    /// a verify and a rebuild that agree with the items.
    @Test func smallCommitsThatMoveEntriesAnswerLikeTheItems() async throws {
        var configuration = Store.Configuration()
        configuration.indexes = [IndexDefinition("tasks", fields: ["due"])]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            for round in 0..<90 {
                let id = "t\(round % 23)"
                if round % 7 == 6 {
                    _ = try await store.delete("tasks", id: id)
                } else {
                    _ = try await store.append([.put("tasks", id: id, fields: ["due": .int(Int64((round * 37) % 50))])])
                }
            }
            let runs = try store.read { try IndexRunDirectory.load(tx: $0.tx, state: $0.projection.state).runs }
            #expect(runs.count < 20)
            let expected = QueryReference.answer(
                try QueryReference.allItems(store, "tasks"), filter: nil, order: [SortField("due", .descending)])
            let answer = try QueryReference.allPages(store, Query("tasks").sorted(by: "due", .descending).limit(4))
            #expect(answer.map(\.id) == expected.map(\.id))
            #expect(try store.count(Query("tasks").sorted(by: "due")) == expected.count)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            try await store.rebuildProjections()
            let rebuilt = try QueryReference.allPages(store, Query("tasks").sorted(by: "due", .descending).limit(4))
            #expect(rebuilt.map(\.id) == expected.map(\.id))
        }
    }

    /// Every entry a walk yields, tombstones included: (key text, live).
    static func walk(
        _ tx: ReadTransaction, _ database: Database, _ state: Database, from start: String, to end: String?,
        descending: Bool
    ) throws -> [(String, Bool)] {
        try withWalk(tx, database, state, from: start, to: end, descending: descending) { walk in
            var entries: [(String, Bool)] = []
            var more = true
            while more { more = try walk.next { key, live in entries.append((text(key), live)) } }
            return entries
        }
    }

    /// Random runs over a small key space (so that runs overlap often, up to every run holding
    /// a key), merged as they fall due, some merges spread over commits: every walk, ascending
    /// or descending, over every range, yields each key once with its newest run's entry, as a
    /// model keeping the last write of each key does. The runs' tournament decides ties by run.
    @Test(arguments: [1, 2, 3, 4, 5, 6]) func walksAnswerLikeTheLastWriteOfEachKey(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        try Self.withIndexDatabase { tx, database, state in
            var model: [String: Bool] = [:]
            let keys = (100..<160).map { "k\($0)" }
            for commit in 0..<Int.random(in: 1...40, using: &random) {
                var entries: [String: Bool] = [:]
                for _ in 0..<Int.random(in: 1...(commit % 5 == 0 ? 50 : 6), using: &random) {
                    entries[keys.randomElement(using: &random)!] = Bool.random(using: &random)
                }
                let sorted = entries.sorted { $0.key < $1.key }
                try Self.write(
                    sorted.map { ($0.key, $0.value) }, tx, database, state,
                    budget: UInt64.random(in: 1...64, using: &random))
                for (key, live) in sorted { model[key] = live }
                let bounds = [keys.randomElement(using: &random)!, keys.randomElement(using: &random)!].sorted()
                for (start, end) in [("", nil), (bounds[0], Optional(bounds[1]))] {
                    let inRange = model.filter { entry in entry.key >= start && end.map { entry.key < $0 } ?? true }
                    let live = inRange.filter(\.value).keys.sorted()
                    for descending in [false, true] {
                        let walked = try Self.walk(tx, database, state, from: start, to: end, descending: descending)
                        let place =
                            "seed \(seed), commit \(commit), \(start)..<\(end ?? "end"), descending \(descending)"
                        // Each key once, in order; a live entry where the last write made it live.
                        // Tombstones may be gone (merges into the oldest run drop them), but one
                        // yielded is the key's last write.
                        let walkedKeys = walked.map(\.0)
                        #expect(walkedKeys == (descending ? walkedKeys.sorted(by: >) : walkedKeys.sorted()), "\(place)")
                        #expect(Set(walkedKeys).count == walkedKeys.count, "\(place)")
                        #expect(walked.filter(\.1).map(\.0) == (descending ? live.reversed() : live), "\(place)")
                        #expect(walked.allSatisfy { inRange[$0.0] == $0.1 }, "\(place)")
                    }
                }
            }
        }
    }
}
