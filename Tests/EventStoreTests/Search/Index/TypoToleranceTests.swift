import EventStoreTestSupport
import Testing

@testable import EventStore

/// Typo tolerance: the edit distance that steers the walk over the term keys, the walk itself
/// against a brute-force distance over every term, and searches that find words with typos.
struct TypoToleranceTests {
    /// The optimal-string-alignment distance, plainly.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    static func verdict(_ word: String, _ term: String, edits: Int = 1, prefix: Bool = false) -> EditDistance.Verdict {
        var distance = EditDistance(target: Array(word.unicodeScalars), maxEdits: edits, asPrefix: prefix)
        return Array(term.utf8).withUnsafeBytes { distance.evaluate($0) }
    }

    @Test func editsAreCountedAsDamerauDoes() {
        #expect(Self.verdict("design", "desgin") == .match(1), "two adjacent letters swapped")
        #expect(Self.verdict("design", "designs") == .match(1))
        #expect(Self.verdict("design", "desin") == .match(1))
        #expect(Self.verdict("design", "dezign") == .match(1))
        #expect(Self.verdict("design", "design") == .noMatch, "the word itself is the exact match's")
        #expect(Self.verdict("synchronization", "synchroniztion", edits: 2) == .match(1))
        #expect(Self.verdict("synchronization", "snychronizatoin", edits: 2) == .match(2))
        #expect(Self.verdict("café", "cafe") == .match(1))
        // Too far early: every term with that beginning is skipped.
        #expect(Self.verdict("design", "zzzzzz") == .deadAfter(2))
        // As a prefix: a beginning a typo away.
        #expect(Self.verdict("synchor", "synchronization", prefix: true) == .match(1))
        // An exact beginning is the prefix match's: every term that shares it is skipped.
        #expect(Self.verdict("synchr", "synchronization", prefix: true) == .deadAfter(6))
    }

    @Test func theWalkFindsWhatABruteForceFinds() async throws {
        var random = SeededGenerator(seed: 7)
        let letters = Array("abcde".unicodeScalars)
        func word(_ length: Int) -> String {
            String(String.UnicodeScalarView((0..<length).map { _ in letters[Int(random.next() % 5)] }))
        }
        let vocabulary = Set((0..<600).map { _ in word(3 + Int(random.next() % 8)) })
        var configuration = ProjectionFixtures.configuration()
        configuration.search.collections["w"] = [.init(name: "t", weight: 1)]
        try await withTemporaryStore(configuration: configuration) { store in
            // In several commits, so that the walk crosses several segments.
            for (index, chunk) in Array(vocabulary).sorted().slices(of: 100).enumerated() {
                try await store.append(
                    chunk.enumerated().map {
                        .put("w", id: "\(index)-\($0.offset)", fields: ["t": .string($0.element)])
                    })
            }
            try store.read { reader in
                var index = try IndexReader(tx: reader.tx, databases: try reader.projection)
                #expect(index.segments.count > 1)
                for round in 0..<200 {
                    let query = word(3 + Int(random.next() % 8))
                    let edits = 1 + round % 2
                    let prefix = round % 3 == 0
                    let found = try index.closeTerms(
                        collection: Keys.collectionPrefix("w"), word: query, maxEdits: edits, asPrefix: prefix,
                        limit: 10_000)
                    let walked = Dictionary(
                        uniqueKeysWithValues: found.map {
                            (String(decoding: $0.lists.term.dropFirst(2), as: UTF8.self), $0.edits)
                        })
                    var expected: [String: Int] = [:]
                    let target = Array(query.unicodeScalars)
                    for term in vocabulary {
                        let scalars = Array(term.unicodeScalars)
                        let best =
                            prefix
                            ? (0...scalars.count).map { Self.distance(target, Array(scalars[..<$0])) }.min()!
                            : Self.distance(target, scalars)
                        if best > 0 && best <= edits { expected[term] = best }
                    }
                    #expect(walked == expected, "round \(round): \(query), \(edits) edits, prefix \(prefix)")
                }
            }
        }
    }

    @Test func aWordWithATypoFindsTheNotesAndRanksBelowExactMatches() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "n1", fields: ["title": "Synchronization design"]),
                .put("notes", id: "n2", fields: ["title": "A desgin review"]),  // the typo is in the note
                .put("notes", id: "n3", fields: ["title": "회의 12345"]),
                .put("notes", id: "n4", fields: ["title": "Sync plan"]),
            ])
            let found = try store.search(SearchQuery("synchroniztion", collection: "notes"))
            #expect(found.map(\.item.id) == ["n1"] && found.first?.typos == 1)
            #expect(try store.search(SearchQuery("synchroniztion", collection: "notes", typos: .off)).isEmpty)
            // As written, "design" finds n1: automatic tolerance stops there; always adds n2 below it.
            #expect(try store.search(SearchQuery("design", collection: "notes")).map(\.item.id) == ["n1"])
            let always = try store.search(SearchQuery("design", collection: "notes", typos: .always))
            #expect(always.map(\.item.id) == ["n1", "n2"] && always.map(\.typos) == [0, 1])
            // The last word as a prefix, a typo away.
            #expect(try store.search(SearchQuery("synchor", collection: "notes")).map(\.item.id) == ["n1"])
            // Short words, numbers and Korean take no typos.
            #expect(try store.search(SearchQuery("synx ", collection: "notes")).isEmpty)
            #expect(try store.search(SearchQuery("12346", collection: "notes")).isEmpty)
            #expect(try store.search(SearchQuery("회외", collection: "notes")).isEmpty)
            // Highlights mark the word that matched with a typo.
            let marked = try store.search(
                SearchQuery("synchroniztion", collection: "notes", highlights: HighlightOptions()))
            #expect(marked.first?.highlights["title"]?.marked == "<b>Synchronization</b> design")
        }
    }
}
