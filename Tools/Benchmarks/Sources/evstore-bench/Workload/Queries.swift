/// One search of the workload, with its words; engines build their own query syntax from it.
struct SearchCase: Sendable {
    /// Whole words, all of which must match.
    var words: [String]
    /// A word prefix that must match too (search-as-you-type), or `nil`.
    var prefix: String?
    /// Whether the words are one quoted phrase (adjacent, in order).
    var phrase = false
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

    /// Phrase queries: two adjacent Latin words taken from the text of events spread over the
    /// workload (so most match the notes they came from, unless a later event changed them).
    /// Latin only: the two engines tokenize Korean differently (FTS5 keeps a Korean word whole,
    /// EventStore indexes bigrams and lets a particle follow a phrase's word), so only Latin
    /// phrases can be compared for identical matches.
    static func phrases(_ workload: Workload, count: Int) -> [SearchCase] {
        var random = SeededRandom(seed: workload.seed ^ 0x5048_5241_5345_5320)
        var generator = workload.makeGenerator()
        let stride = max(1, workload.events / max(count * 2, 1))
        var cases: [SearchCase] = []
        while cases.count < count, let event = generator.next() {
            guard generator.produced % stride == 0, let text = event.content ?? event.title else { continue }
            let words = text.split(separator: " ").map(String.init)
            guard words.count >= 2 else { continue }
            let start = random.below(words.count - 1)
            let pair = [words[start], words[start + 1]]
            guard pair.allSatisfy({ $0.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic } }),
                pair[0] != pair[1]
            else { continue }
            cases.append(SearchCase(words: pair, prefix: nil, phrase: true))
        }
        return cases
    }

    private static func word(_ vocabulary: Vocabulary, _ random: inout SeededRandom) -> String {
        random.below(2) == 0 ? vocabulary.zipfWord(&random) : vocabulary.words[random.below(vocabulary.words.count)]
    }
}
