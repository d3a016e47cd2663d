/// Phrases: a candidate is kept only when its matched terms stand as each quoted phrase says.
extension SearchEngine {
    /// The candidates (indexes of `ids`) that hold every phrase of `text`, in order.
    ///
    /// A candidate is checked with the positions of the terms it matched best
    /// (`contributions[group][candidate]`); a query term that stands for several index terms (a
    /// prefix's expansions, close terms) may make the phrase with any of them the candidate holds,
    /// whose positions are read only for a candidate the best ones fail (``AlternativePositions``).
    func holdingPhrases(_ text: QueryText, groups: [Group], ids: [UInt32], contributions: [[Match]]) throws -> [Int] {
        let phraseTerms = Set(text.phrases.joined().map(\.term))
        var alternatives = AlternativePositions()
        for group in groups where group.terms.count > 1 && phraseTerms.contains(group.position) {
            alternatives.add(group: group.position, terms: group.terms)
        }
        var matcher = PositionMatcher()
        return try ids.indices.filter { candidate in
            try text.phrases.allSatisfy { phrase in
                if try matcher.matches(phrase, positions: { contributions[$0][candidate].positions }) { return true }
                guard phrase.contains(where: { alternatives.has(group: $0.term) }) else { return false }
                return try matcher.matches(
                    phrase,
                    positionsOfEach: { term in
                        try alternatives.positions(group: term, ids[candidate])
                            ?? [contributions[term][candidate].positions]
                    })
            }
        }
    }
}
