import EventStoreTestSupport
import Testing

@testable import EventStore

/// Highlights and snippets: matches marked where they stand in the original text — prefixes,
/// folded letters, Korean words with particles — and a snippet cut around the best match.
struct HighlighterTests {
    static func highlight(_ text: String, _ query: String, words: Int = 16) -> Highlight? {
        let tokenizer = Tokenizer()
        return Highlighter(
            tokenizer: tokenizer, terms: tokenizer.queryTerms(in: query),
            options: HighlightOptions(snippetWords: words, open: "[", close: "]", ellipsis: "…")
        ).highlight(text)
    }

    /// The marked parts, by their ranges.
    static func parts(_ highlight: Highlight?) -> [String] {
        guard let highlight else { return [] }
        return highlight.matches.map { String(highlight.text[$0]) }
    }

    @Test func wordsAndTheLastWordsPrefixAreMarked() throws {
        let highlight = try #require(Self.highlight("The sync design, for offline replicas.", "sync desi"))
        #expect(highlight.marked == "The [sync] [design], for offline replicas.")
        #expect(Self.parts(highlight) == ["sync", "design"])
        #expect(highlight.ranges == [4..<8, 9..<15])
        #expect(!highlight.cutBefore && !highlight.cutAfter)
    }

    @Test func foldedLettersAreMarkedAsWritten() {
        #expect(Self.highlight("Café crème", "cafe")?.marked == "[Café] crème")
        #expect(Self.highlight("CAFÉ", "café")?.marked == "[CAFÉ]")
        // Decomposed: the combining accent belongs to the word.
        #expect(Self.parts(Self.highlight("a cafe\u{301} here", "cafe ")) == ["cafe\u{301}"])
        #expect(Self.highlight("Straße", "strasse")?.marked == "[Straße]")
    }

    @Test func koreanWordsAreMarkedWithoutTheirParticles() {
        #expect(Self.highlight("오프라인에서 동기화를 테스트", "동기화")?.marked == "오프라인에서 [동기화]를 테스트")
        #expect(Self.highlight("책을 읽었다", "책")?.marked == "[책]을 읽었다")
        #expect(Self.highlight("iPhone용 앱", "iphone 용")?.marked == "[iPhone][용] 앱")
        #expect(Self.highlight("東京都に行く", "東京")?.marked == "[東京]都に行く")
    }

    @Test func aLongTextIsCutAroundItsBestMatch() throws {
        let words = (0..<100).map { "w\($0)" }
        var text = words
        text[60] = "sync"
        text[62] = "design"
        text[10] = "sync"
        let highlight = try #require(Self.highlight(text.joined(separator: " "), "sync design", words: 12))
        #expect(highlight.cutBefore && highlight.cutAfter)
        #expect(highlight.marked.hasPrefix("…") && highlight.marked.hasSuffix("…"))
        #expect(Self.parts(highlight) == ["sync", "design"], "the window with both terms, not the first match")
        #expect(highlight.text.split(separator: " ").count == 12)
        #expect(highlight.text.hasPrefix("w57 "), "begun a quarter of a window before the match: \(highlight.text)")
        // Short enough: all of it; with 0 words: always all of it.
        #expect(Self.highlight("just sync here", "sync", words: 12)?.cutAfter == false)
        #expect(Self.highlight(text.joined(separator: " "), "design", words: 0)?.text == text.joined(separator: " "))
    }

    @Test func noMatchGivesNoHighlight() {
        #expect(Self.highlight("nothing to see", "sync") == nil)
        #expect(Self.highlight("", "sync") == nil)
        #expect(Self.highlight("sync", "") == nil)
        // A prefix matches only as the query's last word.
        #expect(Self.highlight("design", "desi ") == nil)
    }
}
