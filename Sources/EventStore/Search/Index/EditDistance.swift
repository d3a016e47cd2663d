/// The optimal-string-alignment distance (Damerau–Levenshtein without repeated edits of one
/// substring) between a fixed word and index terms, computed a row per term character so that
/// a walk over sorted terms can tell when a prefix is already too far.
///
/// Rows are kept between calls: terms arrive in key order and share long beginnings with the
/// term before, so only the rows after the shared characters are computed.
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
    private let width: Int
    /// Row `r` (the distances after the term's first `r` characters) at `r * (width + 1)`.
    private var rows: [Int]
    /// Per row: its least value, the byte offset after its character, and (with `asPrefix`)
    /// the least distance of the word to any prefix of the term up to it.
    private var least: [Int]
    private var offsets: [Int]
    private var best: [Int]
    /// The characters of the rows computed (row `r` is valid for `r ≤ computed.count`).
    private var computed: [Unicode.Scalar] = []
    private var incoming: [(scalar: Unicode.Scalar, end: Int)] = []

    init(target: [Unicode.Scalar], maxEdits: Int, asPrefix: Bool) {
        self.target = target
        self.maxEdits = maxEdits
        self.asPrefix = asPrefix
        width = target.count
        rows = Array(0...target.count)
        least = [0]
        offsets = [0]
        best = [asPrefix ? target.count : Int.max]
    }

    /// Measures one term (UTF-8 bytes, as the index stores it).
    mutating func evaluate(_ term: UnsafeRawBufferPointer) -> Verdict {
        incoming.removeAll(keepingCapacity: true)
        var bytes = term.makeIterator()
        var decoder = UTF8()
        var end = 0
        decoding: while true {
            switch decoder.decode(&bytes) {
            case .scalarValue(let scalar):
                end += UTF8.width(scalar)
                incoming.append((scalar, end))
            case .emptyInput:
                break decoding
            case .error:
                return .noMatch
            }
        }
        // Rows up to the characters shared with the previous term are still right.
        var shared = 0
        while shared < computed.count && shared < incoming.count && computed[shared] == incoming[shared].scalar {
            shared += 1
        }
        computed.removeSubrange(shared...)
        let stride = width + 1
        for index in shared..<incoming.count {
            let row = index + 1
            let scalar = incoming[index].scalar
            if rows.count < (row + 1) * stride {
                rows.append(contentsOf: repeatElement(0, count: stride))
                least.append(0)
                offsets.append(0)
                best.append(0)
            }
            let here = row * stride
            let above = here - stride
            rows[here] = row
            var smallest = row
            for column in 1...width {
                let cost = target[column - 1] == scalar ? 0 : 1
                var value = min(rows[above + column] + 1, rows[here + column - 1] + 1, rows[above + column - 1] + cost)
                if row > 1, column > 1, target[column - 1] == incoming[index - 1].scalar, target[column - 2] == scalar {
                    value = min(value, rows[above - stride + column - 2] + 1)
                }
                rows[here + column] = value
                smallest = min(smallest, value)
            }
            least[row] = smallest
            offsets[row] = incoming[index].end
            best[row] = min(best[row - 1], rows[here + width])
            computed.append(scalar)
            // Every term with this beginning starts with the word itself: the prefix match's.
            if asPrefix && rows[here + width] == 0 { return .deadAfter(offsets[row]) }
            // A swap reaches back over one row: dead only when this row and the one before are over.
            if smallest > maxEdits && least[row - 1] + 1 > maxEdits {
                let prefixBest = best[row]
                return asPrefix && prefixBest <= maxEdits && prefixBest > 0
                    ? .match(prefixBest) : .deadAfter(offsets[row])
            }
        }
        let row = incoming.count
        let edits = asPrefix ? best[row] : rows[row * stride + width]
        return edits > 0 && edits <= maxEdits ? .match(edits) : .noMatch
    }
}
