/// One search of the workload, with its words; engines build their own query syntax from it.
struct SearchCase: Sendable {
    /// Whole words, all of which must match.
    var words: [String]
    /// A word prefix that must match too (search-as-you-type), or `nil`.
    var prefix: String?
}

/// The search workload: 1,000 queries of one and two whole words, and 1,000 prefix queries.
///
/// Each query word is drawn half the time with the text's Zipf frequencies (so common words are
/// searched often, as people do) and half the time uniformly from the vocabulary (topics).
/// Prefix queries are a Latin word's first 3 or 4 letters, alone or after a whole word.
enum Queries {
    static func exact(_ workload: Workload, count: Int) -> [SearchCase] {
        var random = SeededRandom(seed: workload.seed ^ 0x5155_4552_5945_5841)
        return (0..<count).map { index in
            var words = [word(workload.vocabulary, &random)]
            if index % 2 == 1 {
                var second = word(workload.vocabulary, &random)
                while second == words[0] { second = word(workload.vocabulary, &random) }
                words.append(second)
            }
            return SearchCase(words: words, prefix: nil)
        }
    }

    static func prefix(_ workload: Workload, count: Int) -> [SearchCase] {
        var random = SeededRandom(seed: workload.seed ^ 0x5052_4546_4958_5155)
        let vocabulary = workload.vocabulary
        return (0..<count).map { index in
            var base = word(vocabulary, &random)
            while base.count < 5 || !base.unicodeScalars.allSatisfy(\.isASCII) {
                base = word(vocabulary, &random)
            }
            let prefix = String(base.prefix(random.between(3...4)))
            let words = index % 2 == 1 ? [word(vocabulary, &random)] : []
            return SearchCase(words: words, prefix: prefix)
        }
    }

    private static func word(_ vocabulary: Vocabulary, _ random: inout SeededRandom) -> String {
        random.below(2) == 0 ? vocabulary.zipfWord(&random) : vocabulary.words[random.below(vocabulary.words.count)]
    }
}
