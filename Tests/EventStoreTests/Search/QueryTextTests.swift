import EventStoreTestSupport
import Testing

@testable import EventStore

/// Phrases: how a query's quotes are read, how a phrase is placed on a document's positions,
/// and searches with phrases and proximity in English and Korean.
struct QueryTextTests {
    static func phrases(_ text: String) -> [[String]] {
        let parsed = QueryText(text, tokenizer: Tokenizer())
        return parsed.phrases.map { $0.map { (parsed.terms[$0.term].text) + ($0.startsWord ? "" : "+") } }
    }

    /// The notes a query finds, as written (no typos).
    static func ids(_ store: Store, _ text: String) throws -> Set<String> {
        Set(try store.search(SearchQuery(text, collection: "notes", typos: .off)).map(\.item.id))
    }

    @Test func quotesMakePhrasesOfTheirWords() {
        #expect(Self.phrases(#"sync "offline design""#) == [["offline", "design"]])
        #expect(Self.phrases("“Offline, design” notes") == [["offline", "design"]], "typographic quotes")
        #expect(Self.phrases(#""sync design"#) == [["sync", "design"]], "an open phrase runs to the end")
        #expect(Self.phrases(#""sync" design"#).isEmpty, "one word is just the word")
        #expect(Self.phrases(#""a b" x "c d""#) == [["a", "b"], ["c", "d"]])
        // A Korean word keeps its bigrams together; the next word begins a word.
        #expect(Self.phrases(#""동기화 설계""#) == [["동기", "기화+", "설계"]])
        #expect(Self.phrases(#""동기화""#) == [["동기", "기화+"]])
        #expect(QueryText("sync design", tokenizer: Tokenizer()).phrases.isEmpty)
    }

    @Test func aPhraseIsPlacedOnConsecutiveWords() {
        let text = QueryText(#""a b c""#, tokenizer: Tokenizer())
        func at(_ words: UInt32...) -> [TermPosition] { words.map { TermPosition(word: $0, offset: 0) } }
        #expect(QueryText.phraseMatches(text.phrases[0], positions: [at(1, 7), at(8), at(9)]))
        #expect(!QueryText.phraseMatches(text.phrases[0], positions: [at(1, 7), at(8), at(10)]))
        #expect(!QueryText.phraseMatches(text.phrases[0], positions: [at(3), at(2), at(4)]))
        // Closeness: adjacent and in order 1, reversed less, eight apart nothing.
        #expect(QueryText.closeness(at(4), at(5)) == 1)
        #expect(QueryText.closeness(at(5), at(4)) == 6.0 / 7)
        #expect(QueryText.closeness(at(1), at(9)) == 0)
        #expect(QueryText.closeness(at(1, 20), at(9, 22)) == 6.0 / 7)
    }

    @Test func phrasesMatchAdjacentWordsInOrderWithinOneField() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "adjacent", fields: ["title": "Offline sync design notes"]),
                .put("notes", id: "reversed", fields: ["title": "Design of sync, offline"]),
                .put("notes", id: "punctuated", fields: ["title": "We sync. Design follows"]),
                .put("notes", id: "fields", fields: ["title": "Offline sync", "content": "design"]),
                .put("notes", id: "elements", fields: ["title": "Tags", "tags": ["sync", "design"]]),
            ])
            func ids(_ text: String) throws -> Set<String> { try Self.ids(store, text) }
            #expect(try ids("sync design") == ["adjacent", "reversed", "punctuated", "fields", "elements"])
            #expect(try ids(#""sync design""#) == ["adjacent", "punctuated"])
            #expect(try ids(#""design sync""#).isEmpty)
            #expect(try ids(#""offline sync" design"#) == ["adjacent", "fields"])
            #expect(try ids(#""offline sync design notes""#) == ["adjacent"])
            #expect(try ids(#""sync offline""#) == ["reversed"])
        }
    }

    /// The last word of an open phrase is a prefix: any of its expansions the note holds may
    /// complete the phrase, not only the one that scores best.
    @Test func anOpenPhraseEndsWithAnyExpansionOfItsPrefix() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "n", fields: ["title": "offline design desk desk desk desk"]),
                .put("notes", id: "apart", fields: ["title": "design offline desk"]),
            ])
            func ids(_ text: String) throws -> Set<String> { try Self.ids(store, text) }
            // "n" holds "offline design" (its "desk" is more frequent but not after "offline").
            #expect(try ids(#""offline des"#) == ["n", "apart"])
            #expect(try ids(#""offline desi"#) == ["n"])
            #expect(try ids(#""offline desk"#) == ["apart"])
        }
    }

    @Test func koreanPhrasesAllowParticlesAndKeepWordsTogether() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "particle", fields: ["title": "동기화를 설계한다"]),
                .put("notes", id: "reversed", fields: ["title": "설계 후 동기화"]),
                .put("notes", id: "apart", fields: ["title": "기화 동기 설계"]),
                .put("notes", id: "between", fields: ["title": "동기화 문서 설계"]),
            ])
            func ids(_ text: String) throws -> Set<String> { try Self.ids(store, text) }
            #expect(try ids("동기화 설계") == ["particle", "reversed", "apart", "between"])
            #expect(try ids(#""동기화 설계""#) == ["particle"])
            #expect(try ids(#""동기화""#) == ["particle", "reversed", "between"])
            #expect(try ids(#""설계 동기화""#).isEmpty)
        }
    }

    @Test func wordsThatStandCloseRankFirst() async throws {
        try await withTemporaryStore { store in
            // Equal lengths and frequencies: BM25 alone cannot tell them apart.
            try await store.append([
                .put("notes", id: "far", fields: ["title": "sync one two three four five six seven eight design"]),
                .put("notes", id: "near", fields: ["title": "one two three four sync design five six seven eight"]),
                .put("notes", id: "reversed", fields: ["title": "one two three four design sync five six seven eight"]),
                .put("notes", id: "ko-far", fields: ["title": "동기화 하나 둘 셋 넷 다섯 여섯 일곱 여덟 설계"]),
                .put("notes", id: "ko-near", fields: ["title": "하나 둘 셋 넷 동기화 설계 다섯 여섯 일곱 여덟"]),
            ])
            let english = try store.search(SearchQuery("sync design", collection: "notes"))
            #expect(english.map(\.item.id) == ["near", "reversed", "far"])
            #expect(english[0].score > english[1].score && english[1].score > english[2].score)
            let korean = try store.search(SearchQuery("동기화 설계", collection: "notes"))
            #expect(korean.map(\.item.id) == ["ko-near", "ko-far"])
            // With a page of one, the best by proximity is still first.
            #expect(
                try store.search(SearchQuery("sync design", collection: "notes", limit: 1)).map(\.item.id) == ["near"])
            #expect(
                try store.search(SearchQuery("sync design", collection: "notes", limit: 1, offset: 2)).map(\.item.id)
                    == ["far"])
        }
    }

    @Test func positionsSurviveMergesAndMatchARebuild() async throws {
        try await withTemporaryStore { store in
            var random = SeededGenerator(seed: 15)
            let words = ["sync", "design", "offline", "merge", "동기화", "설계", "clock", "event"]
            for round in 0..<60 {
                let text = (0..<8).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
                try await store.append([.put("notes", id: "n\(round % 25)", fields: ["title": .string(text)])])
            }
            let queries = [#""sync design""#, #""동기화 설계""#, #""offline merge clock""#, "event sync"]
            let before = try queries.map { try store.search(SearchQuery($0, collection: "notes", limit: 100)) }
            #expect(try store.verify().isConsistent)
            try await store.rebuildProjections()
            let after = try queries.map { try store.search(SearchQuery($0, collection: "notes", limit: 100)) }
            #expect(before.map { $0.map(\.item.id) } == after.map { $0.map(\.item.id) })
            #expect(before.map { $0.map(\.score) } == after.map { $0.map(\.score) })
            #expect(!before[0].isEmpty)
        }
    }
}
