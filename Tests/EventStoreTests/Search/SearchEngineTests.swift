import EventStoreTestSupport
import Testing

@testable import EventStore

/// The engine's own pieces: the top-k threshold, and a page cut among equal scores.
struct SearchEngineTests {
    @Test(arguments: [1, 2, 5, 20, 100])
    func kthLargestMatchesASort(k: Int) {
        var random = SeededGenerator(seed: UInt64(k))
        for round in 0..<50 {
            let count = k + Int(random.next() % 300)
            // Few distinct values, so that ties at the cut are common.
            let scores = (0..<count).map { _ in Double(random.next() % 40) / 4 }
            let expected = scores.sorted(by: >)[k - 1]
            #expect(SearchEngine.kthLargest(scores, k: k) == expected, "k \(k), round \(round)")
        }
    }

    @Test func hugePagesAndOffsetsAreEveryHitOrNoneNeverACrash() async throws {
        try await withTemporaryStore { store in
            try await store.append((0..<5).map { .put("notes", id: "n\($0)", fields: ["title": "sync design \($0)"]) })
            #expect(try store.search(SearchQuery("sync design", limit: .max, offset: 1)).count == 4)
            #expect(try store.search(SearchQuery("sync design", limit: .max, offset: .max)).isEmpty)
            #expect(try store.searchPage(SearchQuery("sync", limit: .max, offset: .max, facets: ["tags"])).total == 5)
            #expect(try store.search(SearchQuery(#""sync design""#, limit: -1)).isEmpty)
        }
    }

    /// Terms that only deleted or replaced versions held take none of a prefix's expansions (nor
    /// of a word's close terms): a live term after them is found, as a rebuild finds it.
    @Test func termsOfDeadDocumentsTakeNoExpansion() async throws {
        try await withTemporaryStore { store in
            let words = (0..<SearchEngine.maxExpansions).map { "desa\($0)" }.joined(separator: " ")
            try await store.put("notes", id: "old", fields: ["content": .string(words)])
            try await store.delete("notes", id: "old")
            try await store.put("notes", id: "x", fields: ["title": "design"])
            #expect(try store.search(SearchQuery("des")).map(\.item.id) == ["x"])
            try await store.rebuildProjections()
            #expect(try store.search(SearchQuery("des")).map(\.item.id) == ["x"])
        }
    }

    /// A tag no item can carry (it normalizes to nothing) matches nothing, rather than being
    /// dropped from the filter.
    @Test func aBlankTagMatchesNothing() async throws {
        try await withTemporaryStore { store in
            try await store.put("notes", id: "n1", fields: ["title": "sync", "tags": ["work"]])
            #expect(try store.search(SearchQuery("sync", tags: [" "])).isEmpty)
            #expect(try store.search(SearchQuery("sync", tags: ["work"])).map(\.item.id) == ["n1"])
        }
    }

    /// Facets count each distinct element of a long array once (in linear time).
    @Test func facetsOfALongTagList() async throws {
        try await withTemporaryStore { store in
            let tags = (0..<5_000).map { Value.string("t\($0 % 2_500)") }
            try await store.put("notes", id: "n1", fields: ["title": "sync", "tags": .array(tags)])
            let page = try store.searchPage(SearchQuery("sync", facets: ["tags"]))
            let counts = try #require(page.facets["tags"])
            #expect(!counts.isEmpty && counts.allSatisfy { $0.count == 1 })
        }
    }

    /// Positions read from the store can be anything: the distance between them saturates.
    @Test func distancesBetweenExtremePositionsDoNotTrap() {
        #expect(TermPosition(word: .max, offset: 0).distance(to: TermPosition(word: 0, offset: 0)) == .max)
        #expect(TermPosition(word: 0, offset: 0).distance(to: TermPosition(word: .max, offset: 0)) == .max)
    }

    @Test func pagesOfEqualScoresFollowTheItemKeysWhateverTheDocIDs() async throws {
        try await withTemporaryStore { store in
            // Equal documents, written in an order unrelated to their ids.
            let ids = (0..<60).map { "n\(($0 * 37) % 60)" }
            try await store.append(ids.map { .put("notes", id: $0, fields: ["title": "same words here"]) })
            var seen: [String] = []
            for page in 0..<6 {
                let results = try store.search(SearchQuery("same", collection: "notes", limit: 10, offset: page * 10))
                #expect(results.count == 10)
                seen += results.map(\.item.id)
            }
            #expect(seen == ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }
}
