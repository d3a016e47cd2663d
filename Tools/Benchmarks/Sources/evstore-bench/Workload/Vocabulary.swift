/// The fixed vocabulary of the workload: about 5,000 distinct words, one in ten Korean, drawn
/// with Zipf frequencies (rank r has weight 1/r), the way words occur in real text.
///
/// Latin words are built from consonant–vowel syllables (`talemo`, `rusk`, `bivanet`); Korean
/// words from two or three common Hangul syllables (`동기화`, `사람`). The word at each rank is
/// chosen by a shuffle, so Korean words appear at every frequency.
struct Vocabulary: Sendable {
    static let size = 5_000
    static let koreanShare = 10  // percent

    let words: [String]
    /// Whether each word is Korean.
    let isKorean: [Bool]
    /// Cumulative Zipf weights, normalized to end at 1.
    private let cumulative: [Double]

    init(seed: UInt64) {
        var random = SeededRandom(seed: seed ^ 0x766F_6361_6275_6C61)
        let consonants = Array("bcdfghjklmnprstvwz")
        let vowels = Array("aeiou")
        let hangul = Array("가나다라마바사아자차카타파하거너더러머버서어저고노도로모보소오조구누두루무부수우주기니디리미비시이지동화를은는의에서으로한국말글사람시간세상생각")
        var seen = Set<String>()
        var words: [String] = []
        var korean: [Bool] = []
        let koreanCount = Vocabulary.size * Vocabulary.koreanShare / 100
        while words.count < koreanCount {
            let word = String((0..<random.between(2...3)).map { _ in hangul[random.below(hangul.count)] })
            if seen.insert(word).inserted {
                words.append(word)
                korean.append(true)
            }
        }
        while words.count < Vocabulary.size {
            var word = ""
            for _ in 0..<random.between(1...4) {
                word.append(consonants[random.below(consonants.count)])
                word.append(vowels[random.below(vowels.count)])
                if random.below(4) == 0 { word.append(consonants[random.below(consonants.count)]) }
            }
            if word.count >= 3 && seen.insert(word).inserted {
                words.append(word)
                korean.append(false)
            }
        }
        // Shuffle so that the frequency rank does not depend on the kind of word.
        var order = Array(words.indices)
        order.shuffle(using: &random)
        self.words = order.map { words[$0] }
        self.isKorean = order.map { korean[$0] }

        var total = 0.0
        var cumulative: [Double] = []
        cumulative.reserveCapacity(Vocabulary.size)
        for rank in 1...Vocabulary.size {
            total += 1 / Double(rank)
            cumulative.append(total)
        }
        self.cumulative = cumulative.map { $0 / total }
    }

    /// The index of a word drawn with Zipf frequencies.
    func zipfIndex(_ random: inout SeededRandom) -> Int {
        let u = random.unit()
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] < u { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// A word drawn with Zipf frequencies.
    func zipfWord(_ random: inout SeededRandom) -> String { words[zipfIndex(&random)] }

    /// `count` words drawn with Zipf frequencies, joined by spaces.
    func text(words count: Int, _ random: inout SeededRandom) -> String {
        var text = ""
        for index in 0..<count {
            if index > 0 { text.append(" ") }
            text.append(zipfWord(&random))
        }
        return text
    }
}
