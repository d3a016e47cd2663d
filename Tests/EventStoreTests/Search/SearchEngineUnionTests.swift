import EventStoreTestSupport
import Testing

@testable import EventStore

/// The union of a query word's terms (prefix expansions, close terms): sorted runs merged
/// against a plain dictionary of each document's best match.
struct SearchEngineUnionTests {
    @Test func theUnionKeepsEveryDocumentOnceWithItsBestMatchAndTheFirstTermsOnATie() {
        var random = SeededGenerator(seed: 15)
        for _ in 0..<300 {
            let terms = Int.random(in: 1...20, using: &random)
            var runs: [SearchEngine.Run] = []
            var expected: [UInt32: SearchEngine.Match] = [:]
            for term in 0..<terms {
                // Short and long runs over a small range of ids, so they overlap, with few
                // distinct scores and edits, so ties happen.
                let length =
                    Bool.random(using: &random)
                    ? Int.random(in: 0...5, using: &random) : Int.random(in: 0...400, using: &random)
                let ids = Set((0..<length).map { _ in UInt32.random(in: 0..<500, using: &random) }).sorted()
                let edits = Int.random(in: 0...2, using: &random)
                let matches = ids.map { _ in
                    SearchEngine.Match(edits: edits, score: Double(Int.random(in: 0...3, using: &random)), term: term)
                }
                runs.append(SearchEngine.Run(ids: ids, matches: matches))
                // Terms in order, replacing only on a strictly better match: the first term wins a tie.
                for (id, match) in zip(ids, matches) where match.isBetter(than: expected[id] ?? .none) {
                    expected[id] = match
                }
            }
            let union = SearchEngine.union(runs)
            #expect(union.ids == expected.keys.sorted())
            #expect(union.ids.count == union.matches.count)
            for (id, match) in zip(union.ids, union.matches) {
                let wanted = expected[id]!
                #expect(match.term == wanted.term && match.edits == wanted.edits && match.score == wanted.score)
            }
        }
    }

    @Test func noRunsOrEmptyRunsMakeAnEmptyUnion() {
        #expect(SearchEngine.union([]).ids.isEmpty)
        #expect(SearchEngine.union([SearchEngine.Run(), SearchEngine.Run()]).ids.isEmpty)
    }
}
