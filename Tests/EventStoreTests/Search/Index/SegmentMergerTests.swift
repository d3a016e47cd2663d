import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// The segment index in a live store: merges keep the number of segments bounded and drop dead
/// postings, a merge spans commits and survives reopening, and queries stay right throughout.
struct SegmentMergerTests {
    typealias F = ProjectionFixtures

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
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
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
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            var random = SeededGenerator(seed: 21)
            // One large segment: 1,200 notes of 8 words.
            try await store.append(
                (0..<1_200).map {
                    .put("notes", id: "n\($0)", fields: ["title": .string(Self.title(&random, words: 8))])
                })
            let large = try #require(Self.directory(store).segments.first)
            #expect(large.postings >= SegmentDirectory.expungeMinimumPostings)
            // Half of them change, in small commits: tiered merging never reaches the large one.
            for batch in 0..<30 {
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
                rewritten.postings < large.postings * 3 / 4 && rewritten.dropped >= 400,
                "a third of 1,200 had died: \(large) → \(directory.segments)")
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
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
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
    /// larger than one small commit's budget.
    static func storeWithALongMerge(_ store: Store, _ random: inout SeededGenerator) async throws {
        for batch in 0..<8 {
            let count = batch == 7 ? 60 : 200
            try await store.append(
                (0..<count).map { index in
                    .put("notes", id: "b\(batch)-\(index)", fields: ["title": .string(title(&random, words: 10))])
                })
        }
    }

    @Test func aMergeSpansCommitsSurvivesReopeningAndNeverChangesAnswers() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SeededGenerator(seed: 5)
        var store = try Store.open(at: directory.path, configuration: F.configuration())
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
                store = try Store.open(at: directory.path, configuration: F.configuration())
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

/// A damaged search index is a clear error for a query and a reported problem for `verify`,
/// never a crash or a wrong answer.
struct DamagedSearchIndexTests {
    typealias F = ProjectionFixtures

    @Test func aDamagedPostingListIsCorruptForSearchAndReportedByVerify() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append(
                (0..<20).map { .put("notes", id: "n\($0)", fields: ["title": "damaged index \($0)"]) })
            let databases = try store.read { try $0.projection }
            let key = try store.read { reader in
                let segment = try SegmentDirectory.load(tx: reader.tx, state: databases.state).segments[0].id
                return IndexKeys.segment(segment, IndexKeys.term(collection: "notes", term: "damaged"))
            }
            _ = try store.environment.write { tx in
                try tx.put([0, 5, 1, 1], forKey: key, in: databases.searchSegments)
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
}
