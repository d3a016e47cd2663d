/// Typo tolerance: how far a query word may be from the index terms it also matches.
extension SearchEngine {
    /// The most close index terms one query word also matches (with typo tolerance).
    static let maxTypoExpansions = 16
    /// About how many postings the close terms of one query word may hold together (see
    /// ``IndexReader/closeTerms(collection:word:maxEdits:asPrefix:limit:postingBudget:cache:)``).
    static let typoPostingBudget = 8_000

    /// How many edits a query word may be away from an index term: 1 from 5 characters, 2 from
    /// 9; none for shorter words, numbers and CJK text (bigrams and syllables).
    static func allowedEdits(_ word: String) -> Int? {
        let scalars = word.unicodeScalars
        let count = scalars.count
        guard count >= 5 else { return nil }
        guard !scalars.allSatisfy({ $0.properties.numericType != nil }),
            !scalars.contains(where: { Tokenizer.classify($0) == .cjk })
        else { return nil }
        return count >= 9 ? 2 : 1
    }
}
