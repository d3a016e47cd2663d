import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// The segment index in a live store: merges keep the number of segments bounded and drop dead
/// postings, a merge spans commits and survives reopening, and queries stay right throughout.
///
/// These tests follow the merge policy commit by commit, so their commits compute their merge
/// steps themselves; ``MergeAheadTests`` covers the steps computed between commits.
struct SegmentMergerTests {
    typealias F = ProjectionFixtures

    static var configuration: Store.Configuration {
        var configuration = F.configuration()
        configuration.mergesAhead = false
        return configuration
    }

    static func directory(_ store: Store) throws -> SegmentDirectory {
        try store.read { reader in try SegmentDirectory.load(tx: reader.tx, state: try reader.projection.state) }
    }

    /// A title of `count` words drawn from a vocabulary of 40, so terms are shared.
    static func title(_ random: inout SeededGenerator, words count: Int) -> String {
        (0..<count).map { _ in
            let n = Int(random.next() % 40)
            return "w" + String(UnicodeScalar(UInt8(97 + n / 26 % 26))) + String(UnicodeScalar(UInt8(97 + n % 26)))
        }.joined(separator: " ")
    }

    static let queries = ["waa", "wab wac", "wb", "wa", "wad wae", "wam"].map { SearchQuery($0, limit: 50) }

    @Test func singleCommitsMergeIntoFewSegmentsAndSearchLikeARebuild() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            var random = SeededGenerator(seed: 11)
            for round in 0..<600 {
                let id = "n\(random.next() % 60)"
                if round % 17 == 0 {
                    try await store.delete("notes", id: id)
                } else {
                    try await store.put(
                        "notes", id: id,
                        fields: ["title": .string(Self.title(&random, words: 2 + Int(random.next() % 6)))])
                }
            }
            let directory = try Self.directory(store)
            #expect(directory.segments.count <= SegmentDirectory.maxSegments, "\(directory.segments.count) segments")
            #expect(directory.nextSegment > 100, "merges ran: \(directory.nextSegment) segment ids used")
            let live = directory.segments.reduce(0) { $0 + $1.postings }
            #expect(live < 2_000, "dead postings were dropped: \(live) postings left in live segments")
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")

            let hits = try Self.queries.map { try F.hits(store, $0) }
            #expect(hits.filter { !$0.isEmpty }.count >= 4)
            try await store.rebuildProjections()
            #expect(try Self.queries.map { try F.hits(store, $0) } == hits, "scores and order as after a rebuild")
        }
    }

    @Test func aLargeSegmentWhoseDocumentsDieIsRewrittenWithoutThem() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            var random = SeededGenerator(seed: 21)
            // One large segment: 1,200 notes of 8 words.
            try await store.append(
                (0..<1_200).map {
                    .put("notes", id: "n\($0)", fields: ["title": .string(Self.title(&random, words: 8))])
                })
            let large = try #require(Self.directory(store).segments.first)
            #expect(large.postings >= SegmentDirectory.expungeMinimumPostings)
            // Two thirds of them change, in small commits: tiered merging never reaches the large
            // one, and half of it dead is what an expunge waits for.
            for batch in 0..<40 {
                try await store.append(
                    (0..<20).map { index in
                        .put(
                            "notes", id: "n\(batch * 20 + index)",
                            fields: ["title": .string(Self.title(&random, words: 8))])
                    })
            }
            let directory = try Self.directory(store)
            #expect(!directory.segments.contains { $0.id == large.id }, "the large segment was rewritten")
            let rewritten = try #require(directory.segments.first { $0.firstDoc == large.firstDoc })
            #expect(
                rewritten.postings <= large.postings * 11 / 20 && rewritten.dropped >= 600,
                "half of 1,200 had died: \(large) → \(directory.segments)")
            // It is not rewritten again until more of it dies.
            try await store.append((0..<20).map { .put("notes", id: "x\($0)", fields: ["title": "fresh note"]) })
            #expect(try Self.directory(store).segments.first { $0.firstDoc == large.firstDoc } == rewritten)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            let hits = try Self.queries.map { try F.hits(store, $0) }
            try await store.rebuildProjections()
            #expect(try Self.queries.map { try F.hits(store, $0) } == hits)
        }
    }

    @Test func aReplacedVersionIsNeverFoundAgain() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            for version in 0..<120 {
                let word =
                    "ver" + String(UnicodeScalar(UInt8(97 + version / 26)))
                    + String(UnicodeScalar(UInt8(97 + version % 26)))
                try await store.put(
                    "notes", id: "one", fields: ["title": .string("common \(word)"), "tags": ["t\(version % 3)"]])
                #expect(try store.search(word).map(\.item.id) == ["one"])
                if version > 0 {
                    let previous =
                        "ver" + String(UnicodeScalar(UInt8(97 + (version - 1) / 26)))
                        + String(UnicodeScalar(UInt8(97 + (version - 1) % 26)))
                    // Without typos: the current word is one edit away.
                    #expect(
                        try store.search(SearchQuery(previous, typos: .off)).isEmpty, "version \(version - 1) is dead")
                }
                #expect(try store.search("common").count == 1)
                #expect(try store.search(SearchQuery("common", tags: ["t\(version % 3)"])).count == 1)
                #expect(try store.search(SearchQuery("common", tags: ["t\((version + 1) % 3)"])).isEmpty)
            }
            let stats = try store.read { reader in
                try CollectionStats.load("notes", tx: reader.tx, db: try reader.projection.state)
            }
            #expect(stats.documents == 1, "only the live version counts for BM25")
            #expect(try store.verify().isConsistent)
        }
    }

    /// Builds eight tier-1 segments (the last just big enough), so a merge starts whose work is
    /// larger than one small commit's budget. Each title ends with a long word (`wamentence0`…`3`,
    /// between the short words in key order), for typo lookups.
    ///
    /// A commit runs its merge work before its own segment joins the directory, so the merge
    /// starts in the commit after the eighth segment's: one that earns a merge budget (320
    /// postings) with notes of another collection, in a tier of their own, that no query finds.
    static func storeWithALongMerge(_ store: Store, _ random: inout SeededGenerator) async throws {
        for batch in 0..<8 {
            let count = batch == 7 ? 60 : 200
            try await store.append(
                (0..<count).map { index in
                    .put(
                        "notes", id: "b\(batch)-\(index)",
                        fields: ["title": .string(title(&random, words: 10) + " wamentence\(index % 4)")])
                })
        }
        try await store.append(
            (0..<40).map { index in
                .put(
                    "other", id: "start-\(index)",
                    fields: ["title": "start \(index) alpha beta gamma delta epsilon zeta"])
            })
    }

    @Test func aMergeSpansCommitsSurvivesReopeningAndNeverChangesAnswers() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SeededGenerator(seed: 5)
        var store = try Store.open(at: directory.path, configuration: Self.configuration)
        try await Self.storeWithALongMerge(store, &random)
        var index = try Self.directory(store)
        #expect(index.merge != nil, "a tier-1 merge started")
        let expected = try Self.queries.map { try F.hits(store, $0) }
        #expect(expected.filter { !$0.isEmpty }.count >= 4)

        // Small commits advance the merge a budget at a time; answers never change meanwhile.
        var commits = 0
        var reopened = false
        while try Self.directory(store).merge != nil {
            try await store.put("other", id: "x\(commits)", fields: ["title": "unrelated words"])
            commits += 1
            #expect(try Self.queries.map { try F.hits(store, $0) } == expected, "after \(commits) small commits")
            index = try Self.directory(store)
            if commits == 3 {
                #expect(index.merge?.resumeAfter != nil, "the merge stopped part-way")
                #expect(try store.verify().isConsistent, "consistent mid-merge")
                // Closing and reopening (as after a crash: every step is one transaction).
                store.close()
                store = try Store.open(at: directory.path, configuration: Self.configuration)
                #expect(try Self.directory(store) == index, "the merge resumes where it stopped")
                reopened = true
            }
            if commits > 500 { break }
        }
        #expect(reopened && commits > 3 && commits < 500, "\(commits) commits")
        // Clean-up follows the merge (and merges of the small segments written meanwhile); then
        // nothing is left to do.
        for extra in 0..<400 {
            let current = try Self.directory(store)
            if current.cleanup.isEmpty && current.merge == nil { break }
            try await store.put("other", id: "y\(extra)", fields: ["title": "more"])
        }
        index = try Self.directory(store)
        #expect(index.cleanup.isEmpty && index.merge == nil)
        #expect(try Self.queries.map { try F.hits(store, $0) } == expected)
        let report = try store.verify()
        #expect(report.isConsistent, "\(report.problems)")
        store.close()
    }
}

extension SegmentMergerTests {
    /// The segment id of every key of `search_segments`, with the term after it.
    static func keys(_ store: Store) throws -> [(segment: UInt32, term: [UInt8])] {
        try store.read { reader in
            var keys: [(UInt32, [UInt8])] = []
            try reader.tx.withCursor(on: try reader.projection.searchSegments) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    let segment = try IndexKeys.segmentID(of: current.key)
                    let first = UnsafeRawBufferPointer(rebasing: current.key.dropFirst(4))
                    try SegmentEntry.forEachTerm(first: first, value: current.value) { term, _ in
                        keys.append((segment, Array(term)))
                        return true
                    }
                    entry = try cursor.next()
                }
            }
            return keys
        }
    }

    @Test func aMergeMovesEachTermSoTheIndexNeverHoldsItTwice() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            var random = SeededGenerator(seed: 8)
            try await Self.storeWithALongMerge(store, &random)
            let started = try #require(try Self.directory(store).merge)
            let inputs = Set(started.inputs)
            // The merge's first step ran in the commit that began it.
            let before = try Self.keys(store).filter { inputs.contains($0.segment) || $0.segment == started.output }
            let terms = Set(before.map { ByteKey($0.term) })
            let expected = try Self.queries.map { try F.hits(store, $0) }
            // A misspelt word of the segments being merged: the typo lookup reads the vocabulary
            // of the inputs and of the output together.
            let misspelt = SearchQuery("wamentecne2", limit: 50)
            let corrected = try F.hits(store, misspelt)
            #expect(!corrected.isEmpty)
            var steps = 0
            while let merge = try Self.directory(store).merge, merge.output == started.output {
                let keys = try Self.keys(store)
                let moved = Set(keys.filter { $0.segment == merge.output }.map { ByteKey($0.term) })
                let left = keys.filter { inputs.contains($0.segment) }.map { ByteKey($0.term) }
                #expect(moved.isDisjoint(with: left), "a term is in the output or in the inputs, never both")
                #expect(moved.union(left).isSubset(of: terms))
                #expect(keys.filter { inputs.contains($0.segment) || $0.segment == merge.output }.count <= before.count)
                if let resume = merge.resumeAfter {
                    #expect(
                        left.allSatisfy { ByteKey.compare($0.bytes, resume) > 0 }, "terms up to the last moved are out")
                    #expect(moved.allSatisfy { ByteKey.compare($0.bytes, resume) <= 0 })
                }
                #expect(try Self.queries.map { try F.hits(store, $0) } == expected, "after \(steps) steps")
                #expect(try F.hits(store, misspelt) == corrected)
                try await store.put("other", id: "x\(steps)", fields: ["title": "unrelated words"])
                steps += 1
                if steps > 500 { break }
            }
            #expect(steps > 2 && steps <= 500, "\(steps) steps")
            #expect(try Self.keys(store).allSatisfy { !inputs.contains($0.segment) }, "the inputs are gone")
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
    }

    /// Runs `body` in a read snapshot taken now, on another thread, when `go` is signalled.
    final class HeldSnapshot: @unchecked Sendable {
        private let ready = DispatchSemaphore(value: 0)
        private let go = DispatchSemaphore(value: 0)
        private let finished = DispatchSemaphore(value: 0)
        private var result: Result<[String], any Error> = .success([])
        private var body: (@Sendable (StoreReader) throws -> [String])?

        init(_ store: Store) {
            let thread = Thread { [self] in
                do {
                    try store.read { reader in
                        ready.signal()
                        go.wait()
                        result = .success(try body.map { try $0(reader) } ?? [])
                    }
                } catch {
                    result = .failure(error)
                }
                finished.signal()
            }
            thread.start()
            ready.wait()
        }

        /// Runs `body` in the held snapshot and releases it.
        func finish(_ body: (@Sendable (StoreReader) throws -> [String])?) throws -> [String] {
            self.body = body
            go.signal()
            finished.wait()
            return try result.get()
        }
    }

    @Test func anOlderSnapshotFindsTheCloseTermsItHoldsWhileAMergeMovesThem() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            var random = SeededGenerator(seed: 12)
            try await Self.storeWithALongMerge(store, &random)
            let term = IndexKeys.term(collection: "notes", term: "wamentence2")
            let misspelt = SearchQuery("wamentecne2", limit: 1_000)
            // No typo lookup before the commit that moves the term: the cache must not have read
            // the inputs while they still held it.
            var answers: (newer: [String], older: [String])?
            for step in 0..<500 where answers == nil {
                guard let merge = try Self.directory(store).merge else { break }
                let before = merge.resumeAfter.map { ByteKey.compare($0, term) >= 0 } ?? false
                let held = HeldSnapshot(store)
                try await store.put("other", id: "x\(step)", fields: ["title": "unrelated words"])
                let moved =
                    try Self.directory(store).merge.map { merge in
                        merge.resumeAfter.map { ByteKey.compare($0, term) >= 0 } ?? false
                    } ?? true
                guard !before && moved else {
                    _ = try held.finish(nil)
                    continue
                }
                // The newer snapshot reads the inputs without the term (it moved) first; the older
                // one, whose inputs still hold it, must find it all the same.
                let newer = try store.search(misspelt).map(\.item.id)
                let older = try held.finish { reader in try reader.search(misspelt).map(\.item.id) }
                answers = (newer, older)
            }
            let (newer, older) = try #require(answers, "a commit moved the term")
            for extra in 0..<500 where try Self.directory(store).merge != nil {
                try await store.put("other", id: "y\(extra)", fields: ["title": "more"])
            }
            let expected = try store.search(misspelt).map(\.item.id).sorted()
            #expect(expected.count > 100)
            #expect(newer.sorted() == expected)
            #expect(older.sorted() == expected, "the older snapshot found \(older.count) of \(expected.count)")
        }
    }

    @Test func aRebuildNumbersItsSegmentsAfterTheOtherGenerations() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            var random = SeededGenerator(seed: 13)
            try await Self.storeWithALongMerge(store, &random)
            let before = try Self.directory(store).nextSegment
            try await store.rebuildProjections()
            let rebuilt = try Self.directory(store)
            #expect(rebuilt.segments.allSatisfy { $0.id >= before }, "\(before): \(rebuilt.segments.map(\.id))")
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func aMergeBegunByTheFormerDirectoryFormatCopiesAndQueriesIgnoreItsOutput() async throws {
        try await withTemporaryStore(configuration: Self.configuration) { store async throws in
            var random = SeededGenerator(seed: 9)
            try await Self.storeWithALongMerge(store, &random)
            for extra in 0..<500 {
                let index = try Self.directory(store)
                if index.merge == nil && index.cleanup.isEmpty && index.segments.count >= 2 { break }
                try await store.put("other", id: "z\(extra)", fields: ["title": "unrelated words"])
            }
            // As directory format 2 left it: a merge that copies terms, just begun.
            var index = try Self.directory(store)
            #expect(index.merge == nil && index.segments.count >= 2)
            let merge = SegmentDirectory.Merge(
                inputs: index.segments[0..<2].map(\.id), output: try index.allocateSegmentID(), resumeAfter: nil,
                written: 0, movesTerms: false)
            index.merge = merge
            var encoded = index.encoded()
            #expect(try encoded.withUnsafeBytes { try SegmentDirectory(decoding: $0) } == index)
            let databases = try store.read { try $0.projection }
            _ = try store.environment.write { tx in try index.save(tx: tx, state: databases.state) }
            let inputs = Set(merge.inputs)
            let before = try Self.keys(store).filter { inputs.contains($0.segment) }.count
            let expected = try Self.queries.map { try F.hits(store, $0) }
            var steps = 0
            while let current = try Self.directory(store).merge, current.output == merge.output {
                #expect(!current.movesTerms)
                #expect(
                    try Self.keys(store).filter { inputs.contains($0.segment) }.count == before, "inputs stay whole")
                #expect(try Self.queries.map { try F.hits(store, $0) } == expected, "the partial output is ignored")
                try await store.put("other", id: "x\(steps)", fields: ["title": "unrelated words"])
                steps += 1
                if steps > 500 { break }
            }
            #expect(steps > 1 && steps <= 500)
            for extra in 0..<400 where !(try Self.directory(store).cleanup.isEmpty) {
                try await store.put("other", id: "y\(extra)", fields: ["title": "more"])
            }
            #expect(try Self.queries.map { try F.hits(store, $0) } == expected)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            encoded = try Self.directory(store).encoded()
            #expect(encoded.first == SegmentDirectory.formatVersion)
        }
    }
}

/// A damaged search index is a clear error for a query and a reported problem for `verify`,
/// never a crash or a wrong answer.
struct DamagedSearchIndexTests {
    typealias F = ProjectionFixtures

    @Test func aDamagedPostingListIsCorruptForSearchAndReportedByVerify() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append(
                (0..<20).map { .put("notes", id: "n\($0)", fields: ["title": "damaged index \($0)"]) })
            let databases = try store.read { try $0.projection }
            // The list's flags byte inside the entry that holds the term (a block of the
            // segment's terms) becomes one no list has: that list alone is damaged.
            let (key, value) = try store.read { reader in
                let segment = try SegmentDirectory.load(tx: reader.tx, state: databases.state).segments[0].id
                let prefix = IndexKeys.segment(segment)
                let term = IndexKeys.term(collection: "notes", term: "damaged")
                return try reader.tx.withCursor(on: databases.searchSegments) { cursor in
                    let entry = try #require(try SegmentEntry.seek(cursor, segment: prefix, term: term))
                    let list = try #require(
                        try term.withUnsafeBytes {
                            try SegmentEntry.list(
                                of: $0, first: SegmentEntry.firstTerm(of: entry.key, segment: prefix),
                                value: entry.value)
                        })
                    var value = Array(entry.value)
                    value[list.baseAddress! - entry.value.baseAddress!] = 7
                    return (Array(entry.key), value)
                }
            }
            _ = try store.environment.write { tx in
                try tx.put(value, forKey: key, in: databases.searchSegments)
            }
            do {
                _ = try store.search("damaged")
                Issue.record("a damaged posting list must not answer")
            } catch let error as EventStoreError {
                #expect(error.code == .corrupt, "\(error)")
            }
            #expect(try store.search("index").count == 20, "other terms still answer")
            let report = try store.verify()
            #expect(!report.isConsistent)
            #expect(
                report.problems.contains { $0.kind == "undecodable" && $0.key == "notes/damaged" }, "\(report.problems)"
            )
            // A rebuild repairs it.
            try await store.rebuildProjections()
            #expect(try store.search("damaged").count == 20)
            #expect(try store.verify().isConsistent)
        }
    }

    /// A damaged block (its header, not one list) fails the queries that read it with a
    /// `corrupt` error, is reported by verify, and a rebuild repairs it.
    @Test func aDamagedBlockIsCorruptForSearchAndReportedByVerify() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append(
                (0..<20).map { .put("notes", id: "n\($0)", fields: ["title": "damaged block \($0)"]) })
            let databases = try store.read { try $0.projection }
            // The segment's first block of terms, and the word its key starts with.
            let (key, value, word) = try store.read { reader in
                let segment = try SegmentDirectory.load(tx: reader.tx, state: databases.state).segments[0].id
                let prefix = IndexKeys.segment(segment) + Keys.collectionPrefix("notes")
                var found: ([UInt8], [UInt8], String)?
                try prefix.withUnsafeBytes { start in
                    try reader.tx.forEach(in: databases.searchSegments, from: start) { key, value in
                        guard key.starts(with: prefix) else { return false }
                        guard value.first == SegmentEntry.blockMarker else { return true }
                        var damaged = Array(value)
                        damaged[1] = 0x7F  // a term count the block cannot hold
                        found = (Array(key), damaged, String(decoding: key.dropFirst(prefix.count), as: UTF8.self))
                        return false
                    }
                }
                return try #require(found)
            }
            _ = try store.environment.write { tx in
                try tx.put(value, forKey: key, in: databases.searchSegments)
            }
            #expect(throws: EventStoreError.self) { _ = try store.search(word) }
            let report = try store.verify()
            #expect(!report.isConsistent)
            #expect(report.problems.contains { $0.kind == "undecodable" }, "\(report.problems.prefix(3))")
            try await store.rebuildProjections()
            #expect(try store.search("damaged").count == 20)
            #expect(try store.verify().isConsistent)
        }
    }
}
