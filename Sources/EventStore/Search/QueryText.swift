/// A query's text as the search engine reads it: its terms, each once (all must match), and the
/// phrases quoted in it, whose words must also stand adjacent and in order.
///
/// `sync "offline design"` → terms `sync`, `offline`, `design`; one phrase, `offline design`.
/// Straight and typographic double quotes (`"`, `“`, `”`, `„`) open and close a phrase; a phrase
/// left open runs to the end of the text. A phrase of one Latin word is that word; a Korean word
/// in quotes keeps its bigrams together (`"동기화"` does not match `동기` and `기화` apart).
struct QueryText {
    /// One word of a phrase: the query term it is, and whether it begins a word (a Latin word, a
    /// CJK run's first bigram, a single CJK character) or continues the CJK run before it.
    struct PhraseToken: Equatable {
        var term: Int
        var startsWord: Bool
    }

    var terms: [QueryTerm]
    /// The phrases of two or more tokens.
    var phrases: [[PhraseToken]]

    static let quotes: Set<Character> = ["\"", "\u{201C}", "\u{201D}", "\u{201E}"]

    init(_ text: String, tokenizer: Tokenizer) {
        terms = tokenizer.queryTerms(in: text)
        phrases = []
        guard text.contains(where: QueryText.quotes.contains) else { return }
        var numbers: [String: Int] = [:]
        for (index, term) in terms.enumerated() { numbers[term.text] = index }
        let parts = text.split(omittingEmptySubsequences: false, whereSeparator: QueryText.quotes.contains)
        // Every second part was between quotes.
        for part in stride(from: 1, to: parts.count, by: 2).map({ parts[$0] }) {
            var tokens: [PhraseToken] = []
            var complete = true
            _ = tokenizer.scan(String(part)) { bytes, kind in
                guard let term = numbers[String(decoding: bytes, as: UTF8.self)] else {
                    complete = false
                    return
                }
                tokens.append(PhraseToken(term: term, startsWord: kind != .bigram))
            }
            if complete && tokens.count > 1 { phrases.append(tokens) }
        }
    }

    /// Whether some placement of the phrase fits the positions: `positions[t]` holds where the
    /// phrase's `t`-th token's term stands in a document (increasing). Each token after the
    /// first stands at the next word (offset 0) when it begins a word, else at the next bigram
    /// of the same run.
    static func phraseMatches(_ tokens: [PhraseToken], positions: ArraySlice<[TermPosition]>) -> Bool {
        guard let first = positions.first else { return false }
        starts: for start in first {
            var current = start
            for index in tokens.indices.dropFirst() {
                let wanted =
                    tokens[index].startsWord
                    ? TermPosition(word: current.word &+ 1, offset: 0)
                    : TermPosition(word: current.word, offset: current.offset &+ 1)
                guard QueryText.contains(positions[index], wanted) else { continue starts }
                current = wanted
            }
            return true
        }
        return false
    }

    /// Binary search in increasing positions.
    private static func contains(_ positions: [TermPosition], _ wanted: TermPosition) -> Bool {
        var low = 0
        var high = positions.count
        while low < high {
            let middle = (low + high) / 2
            if positions[middle] < wanted { low = middle + 1 } else { high = middle }
        }
        return low < positions.count && positions[low] == wanted
    }

    /// How close together two terms stand at best, from 0 (never within 8 words) to 1 (adjacent,
    /// in order): `(8 − distance) / 7`, a term standing before the other counting one word more
    /// (see ``TermPosition/distance(to:)``).
    static func closeness(_ first: [TermPosition], _ second: [TermPosition]) -> Double {
        var best = UInt32.max
        var i = 0
        var j = 0
        // A merge of the two lists: each position is compared with the nearest of the other's
        // that precedes it.
        var lastFirst: TermPosition?
        var lastSecond: TermPosition?
        while i < first.count || j < second.count {
            if j == second.count || (i < first.count && first[i] < second[j]) {
                if let lastSecond { best = min(best, first[i].distance(to: lastSecond)) }
                lastFirst = first[i]
                i += 1
            } else {
                if let lastFirst { best = min(best, lastFirst.distance(to: second[j])) }
                lastSecond = second[j]
                j += 1
            }
            if best == 1 { break }
        }
        return best >= 8 ? 0 : Double(8 - best) / 7
    }
}
