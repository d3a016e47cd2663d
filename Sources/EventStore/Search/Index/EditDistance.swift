/// The optimal-string-alignment distance (Damerau–Levenshtein without repeated edits of one
/// substring) between a fixed word and index terms, computed a row per term character so that
/// a walk over sorted terms can tell when a prefix is already too far.
struct EditDistance {
    enum Verdict: Equatable {
        /// The term is within the bound, at this many edits (never 0).
        case match(Int)
        /// The term is too far, but longer terms sharing a prefix with it may not be.
        case noMatch
        /// No term that begins with the term's first `n` bytes can be within the bound.
        case deadAfter(Int)
    }

    let target: [Unicode.Scalar]
    let maxEdits: Int
    let asPrefix: Bool
    private var previous: [Int]
    private var current: [Int]
    private var beforePrevious: [Int]

    init(target: [Unicode.Scalar], maxEdits: Int, asPrefix: Bool) {
        self.target = target
        self.maxEdits = maxEdits
        self.asPrefix = asPrefix
        previous = Array(0...target.count)
        current = previous
        beforePrevious = previous
    }

    /// Measures one term (UTF-8 bytes, as the index stores it).
    mutating func evaluate(_ term: UnsafeRawBufferPointer) -> Verdict {
        let width = target.count
        for index in 0...width { previous[index] = index }
        var best = Int.max  // with asPrefix: the least distance of the word to a prefix of the term
        var prior: Unicode.Scalar?
        var row = 0
        var offset = 0
        var bytes = term.makeIterator()
        var decoder = UTF8()
        decoding: while true {
            switch decoder.decode(&bytes) {
            case .scalarValue(let scalar):
                row += 1
                offset += UTF8.width(scalar)
                current[0] = row
                var least = row
                for column in 1...width {
                    let cost = target[column - 1] == scalar ? 0 : 1
                    var value = min(previous[column] + 1, current[column - 1] + 1, previous[column - 1] + cost)
                    if row > 1, column > 1, let prior, target[column - 1] == prior, target[column - 2] == scalar {
                        value = min(value, beforePrevious[column - 2] + 1)
                    }
                    current[column] = value
                    least = min(least, value)
                }
                if asPrefix {
                    // Every term with this beginning starts with the word itself: the prefix
                    // match's, not a typo's.
                    if current[width] == 0 { return .deadAfter(offset) }
                    best = min(best, current[width])
                }
                // A swap can still reach back over one row: dead only when both rows are over.
                if least > maxEdits && previous.min()! + 1 > maxEdits {
                    return asPrefix && best <= maxEdits && best > 0 ? .match(best) : .deadAfter(offset)
                }
                swap(&beforePrevious, &previous)
                swap(&previous, &current)
                prior = scalar
            case .emptyInput:
                break decoding
            case .error:
                return .noMatch
            }
        }
        let edits = asPrefix ? min(best, previous[width]) : previous[width]
        return edits > 0 && edits <= maxEdits ? .match(edits) : .noMatch
    }
}
