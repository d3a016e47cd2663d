import EventStoreTestSupport
import Testing

@testable import EventStore

/// Tests of the search index tokenizer: normalization, word splitting, CJK bigrams, query prefix
/// rules and tag normalization.
struct TokenizerTests {
    /// The tokenizer under test; it is stateless.
    let tokenizer = Tokenizer()

    /// Shorthand for a query term.
    private func term(_ text: String, prefix: Bool = false) -> QueryTerm {
        QueryTerm(text: text, isPrefix: prefix)
    }

    // MARK: Index terms

    /// English words are lowercased; punctuation and the apostrophe separate words; duplicates stay.
    @Test func englishWordsCaseAndPunctuation() {
        #expect(
            tokenizer.indexTerms(in: "Hello, World! It's SYNC-time.") == ["hello", "world", "it", "s", "sync", "time"])
        #expect(tokenizer.indexTerms(in: "the cat and THE hat") == ["the", "cat", "and", "the", "hat"])
        #expect(tokenizer.indexTerms(in: "snake_case/path\\to(x)") == ["snake", "case", "path", "to", "x"])
        #expect(tokenizer.indexTerms(in: "hello😀world") == ["hello", "world"])
    }

    /// `forEachIndexTerm` sees exactly the sequence `indexTerms` returns.
    @Test func forEachMatchesIndexTerms() {
        let text = "Sync the café, 동기화를 iPhone용 data data"
        var seen: [String] = []
        tokenizer.forEachIndexTerm(in: text) { seen.append($0) }
        #expect(seen == tokenizer.indexTerms(in: text))
        #expect(seen == ["sync", "the", "cafe", "동기", "기화", "화를", "iphone", "용", "data", "data"])
    }

    /// Latin, Greek and Cyrillic diacritics are folded; composed and decomposed input agree.
    @Test func diacritics() {
        #expect(
            tokenizer.indexTerms(in: "café Ångström naïve SEÑOR Über") == [
                "cafe", "angstrom", "naive", "senor", "uber",
            ])
        #expect(tokenizer.indexTerms(in: "cafe\u{301}") == ["cafe"])
        #expect(tokenizer.indexTerms(in: "Tiếng Việt") == ["tieng", "viet"])
        #expect(tokenizer.indexTerms(in: "Straße Øresund Łódź") == ["strasse", "oresund", "lodz"])
        #expect(tokenizer.indexTerms(in: "Άσσος ΣΟΦΟΣ Ёлка") == ["ασσοσ", "σοφοσ", "елка"])
    }

    /// NFKC maps compatibility characters: ligatures, full-width and half-width forms.
    @Test func compatibilityNormalization() {
        #expect(tokenizer.indexTerms(in: "ﬁle") == ["file"])
        #expect(tokenizer.indexTerms(in: "Ａｂｃ１２ Ａ") == ["abc12", "a"])
        #expect(tokenizer.indexTerms(in: "ｶﾀｶﾅ") == ["カタ", "タカ", "カナ"])
    }

    /// Korean runs become overlapping bigrams; Hangul is never split into jamo.
    @Test func koreanBigrams() {
        #expect(tokenizer.indexTerms(in: "동기화를") == ["동기", "기화", "화를"])
        #expect(tokenizer.indexTerms(in: "오프라인에서 동기화") == ["오프", "프라", "라인", "인에", "에서", "동기", "기화"])
        #expect(tokenizer.indexTerms(in: "한국어") == ["한국", "국어"])
    }

    /// A one-syllable Korean run is indexed as that unigram.
    @Test func koreanUnigram() {
        #expect(tokenizer.indexTerms(in: "책") == ["책"])
        #expect(tokenizer.indexTerms(in: "책 을 읽다") == ["책", "을", "읽다"])
    }

    /// A change between a CJK script and other letters or digits splits words.
    @Test func mixedScriptSplitting() {
        #expect(tokenizer.indexTerms(in: "iPhone용") == ["iphone", "용"])
        #expect(tokenizer.indexTerms(in: "용iPhone") == ["용", "iphone"])
        #expect(tokenizer.indexTerms(in: "한국어 text café 동기") == ["한국", "국어", "text", "cafe", "동기"])
    }

    /// Japanese kana and Han runs become bigrams; punctuation such as `・` separates runs.
    @Test func japaneseBigrams() {
        #expect(tokenizer.indexTerms(in: "東京タワー") == ["東京", "京タ", "タワ", "ワー"])
        #expect(tokenizer.indexTerms(in: "ひらがな・カタカナ") == ["ひら", "らが", "がな", "カタ", "タカ", "カナ"])
        #expect(tokenizer.indexTerms(in: "日本語、漢字。") == ["日本", "本語", "漢字"])
    }

    /// Digits are word characters; non-letters such as `.` split numbers.
    @Test func numbers() {
        #expect(tokenizer.indexTerms(in: "v1.2 build 42 in 2024") == ["v1", "2", "build", "42", "in", "2024"])
        #expect(tokenizer.indexTerms(in: "2024년 3월") == ["2024", "년", "3", "월"])
        #expect(tokenizer.indexTerms(in: "x²") == ["x2"])
    }

    /// Words longer than `maxTermBytes` are cut at a character boundary.
    @Test func longWordsAreCut() {
        #expect(Tokenizer.maxTermBytes == 48)
        #expect(tokenizer.indexTerms(in: String(repeating: "a", count: 60)) == [String(repeating: "a", count: 48)])
        #expect(tokenizer.indexTerms(in: String(repeating: "ж", count: 30)) == [String(repeating: "ж", count: 24)])
        // One byte plus two-byte letters: 47 bytes, since a 48th byte would split a letter.
        let cut = tokenizer.indexTerms(in: "a" + String(repeating: "ж", count: 30))
        #expect(cut == ["a" + String(repeating: "ж", count: 23)])
        #expect(cut.first?.utf8.count == 47)
        // Folding happens before cutting: 30 × é folds to 30 ASCII bytes, short enough.
        #expect(tokenizer.indexTerms(in: String(repeating: "é", count: 30)) == [String(repeating: "e", count: 30)])
    }

    /// Empty and whitespace- or punctuation-only input gives no terms.
    @Test func emptyInput() {
        #expect(tokenizer.indexTerms(in: "").isEmpty)
        #expect(tokenizer.indexTerms(in: "   \n\t ").isEmpty)
        #expect(tokenizer.indexTerms(in: " \u{3000} 、。!?").isEmpty)
        #expect(tokenizer.queryTerms(in: "").isEmpty)
        #expect(tokenizer.queryTerms(in: "  \t").isEmpty)
    }

    // MARK: Queries

    /// The last non-CJK word is a prefix unless the query ends with whitespace or punctuation.
    @Test func queryPrefixRules() {
        #expect(tokenizer.queryTerms(in: "offl") == [term("offl", prefix: true)])
        #expect(tokenizer.queryTerms(in: "offl ") == [term("offl")])
        #expect(tokenizer.queryTerms(in: "offl.") == [term("offl")])
        #expect(tokenizer.queryTerms(in: "Sync OFFL") == [term("sync"), term("offl", prefix: true)])
        #expect(tokenizer.queryTerms(in: "naïve sync") == [term("naive"), term("sync", prefix: true)])
        #expect(tokenizer.queryTerms(in: "Ｏｆｆ") == [term("off", prefix: true)])
    }

    /// CJK runs give exact bigrams; a one-character run gives a prefix unigram anywhere.
    @Test func queryCJKRules() {
        #expect(tokenizer.queryTerms(in: "동기화") == [term("동기"), term("기화")])
        #expect(tokenizer.queryTerms(in: "책") == [term("책", prefix: true)])
        #expect(tokenizer.queryTerms(in: "책 읽기") == [term("책", prefix: true), term("읽기")])
        #expect(tokenizer.queryTerms(in: "iPhone용") == [term("iphone"), term("용", prefix: true)])
        #expect(tokenizer.queryTerms(in: "용 iph") == [term("용", prefix: true), term("iph", prefix: true)])
    }

    /// Query bigrams are a subset of the index bigrams of longer words, so `동기화` finds `동기화를`.
    @Test func queryBigramsMatchIndexedWords() {
        let indexed = Set(tokenizer.indexTerms(in: "오프라인에서 동기화를 지원"))
        for query in ["동기화", "오프라인"] {
            let terms = tokenizer.queryTerms(in: query)
            #expect(!terms.isEmpty)
            #expect(terms.allSatisfy { !$0.isPrefix && indexed.contains($0.text) })
        }
        #expect(
            tokenizer.queryTerms(in: "지").allSatisfy { term in
                term.isPrefix && indexed.contains { $0.hasPrefix(term.text) }
            })
    }

    /// Duplicate query terms are removed, keeping the first occurrence.
    @Test func queryDuplicatesRemoved() {
        #expect(tokenizer.queryTerms(in: "sync sync") == [term("sync")])
        #expect(tokenizer.queryTerms(in: "a b A") == [term("a"), term("b")])
        #expect(tokenizer.queryTerms(in: "동기 동기") == [term("동기")])
        #expect(tokenizer.queryTerms(in: "café CAFE cafe\u{301}") == [term("cafe")])
    }

    // MARK: Tags

    /// Tags are folded like terms, trimmed, and inner whitespace runs collapse to one space.
    @Test func normalizeTag() {
        #expect(tokenizer.normalizeTag("  Work   Items\t") == "work items")
        #expect(tokenizer.normalizeTag("Café \u{3000} Crème") == "cafe creme")
        #expect(tokenizer.normalizeTag("C++") == "c++")
        #expect(tokenizer.normalizeTag("\u{A0}Ｔａｇ\u{2003}ＯＮＥ\u{A0}") == "tag one")
        #expect(tokenizer.normalizeTag("한국어  태그") == "한국어 태그")
        #expect(tokenizer.normalizeTag("   ") == "")
        #expect(tokenizer.normalizeTag("") == "")
    }

    // MARK: The CJK fast path

    /// Every character the fast path cuts from bytes is one the Unicode path sees as a CJK letter
    /// and folds to itself; characters next to the ranges (voicing marks, jamo, U+30FB) are not.
    @Test func simpleCJKCharactersAreCJKLettersThatFoldingKeeps() {
        let ranges: [ClosedRange<UInt32>] = [
            0xAC00...0xD7A3, 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x3041...0x3096, 0x30A1...0x30FA, 0x30FC...0x30FE,
        ]
        var checked = 0
        var wrong: [UInt32] = []
        for range in ranges {
            for value in range {
                let scalar = Unicode.Scalar(value)!
                var folded: [Unicode.Scalar] = []
                Tokenizer.forEachFoldedScalar(of: String(Character(scalar))) { folded.append($0) }
                if !Tokenizer.isSimpleCJK(value) || Tokenizer.classify(scalar) != .cjk || folded != [scalar] {
                    wrong.append(value)
                }
                checked += 1
            }
        }
        #expect(checked == 11_172 + 20_992 + 6_592 + 86 + 90 + 3)
        #expect(wrong.isEmpty, "not simple CJK letters: \(wrong.prefix(10).map { String($0, radix: 16) })")
        for value: UInt32 in [
            0x3040, 0x3097, 0x3099, 0x309A, 0x309B, 0x30A0, 0x30FB, 0x30FF, 0x1100, 0x11A8, 0xD7A4, 0xF900,
        ] {
            #expect(!Tokenizer.isSimpleCJK(value), "U+\(String(value, radix: 16))")
        }
    }

    /// The fast path gives the terms, kinds and end-of-word of the Unicode path, on random text
    /// mixing ASCII, Hangul, Han, kana with voicing marks, conjoining jamo, accented Latin,
    /// full-width letters, marks and separators.
    @Test func fastPathsAgreeWithTheUnicodePath() {
        let pieces = [
            "sync", "Data", "v2", "동기화", "를", "책", "한국어", "東京", "漢", "タワー", "ひらがな", "か\u{3099}", "が",
            "\u{1100}\u{1161}", "\u{11A8}", "각\u{11A8}", "café", "e\u{301}", "Ａｂ", "ｶﾀ", "・", "、", "ー", "ヽ", "ゟ",
            "😀", " ", " ", "-", ".", "\t", "iPhone용", "2024년", "\u{200B}", "\u{AD}",
        ]
        var random = SeededGenerator(seed: 0x7A11)
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 1...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            var fast: [String] = []
            let fastEnds = tokenizer.scan(text) { term, kind in
                fast.append("\(kind):\(String(decoding: term, as: UTF8.self))")
            }
            var slow: [String] = []
            let slowEnds = tokenizer.scanUnicode(text) { term, kind in
                slow.append("\(kind):\(String(decoding: term, as: UTF8.self))")
            }
            #expect(fast == slow, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(fastEnds == slowEnds, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
