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
