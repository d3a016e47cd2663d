/// Collects where each term of a document stands while the document is tokenized, and encodes
/// the positions term by term (``PositionList``) into one arena shared by the transaction's new
/// documents; its buffers are reused from document to document.
struct PositionCollector {
    /// The encoded positions of every document collected since the last ``removeAll()``.
    private(set) var arena = ByteWriter(capacity: 4_096)
    private var occurrences: [(term: Int32, position: TermPosition)] = []
    private var starts: [Int32] = []
    private var ordered: [TermPosition] = []

    /// Records that the document's term `term` (its index in the document) stands at `position`;
    /// positions are recorded in increasing order.
    mutating func record(term: Int, at position: TermPosition) {
        occurrences.append((Int32(term), position))
    }

    /// Encodes the document's positions, grouped by term (a stable counting sort keeps each
    /// term's positions increasing), and calls `body` with each term's range in ``arena``.
    mutating func finishDocument(terms: Int, _ body: (_ term: Int, _ range: Range<Int>) -> Void) {
        starts.removeAll(keepingCapacity: true)
        starts.append(contentsOf: repeatElement(0, count: terms + 1))
        for occurrence in occurrences { starts[Int(occurrence.term) + 1] += 1 }
        for term in 0..<terms { starts[term + 1] += starts[term] }
        ordered.removeAll(keepingCapacity: true)
        ordered.append(contentsOf: repeatElement(TermPosition(word: 0, offset: 0), count: occurrences.count))
        for occurrence in occurrences {
            ordered[Int(starts[Int(occurrence.term)])] = occurrence.position
            starts[Int(occurrence.term)] += 1
        }
        // `starts[t]` is now the end of term t's run.
        var begin = 0
        for term in 0..<terms {
            let end = Int(starts[term])
            let first = arena.bytes.count
            PositionList.encode(ordered[begin..<end], into: &arena)
            body(term, first..<arena.bytes.count)
            begin = end
        }
        occurrences.removeAll(keepingCapacity: true)
    }

    mutating func removeAll() {
        arena.bytes.removeAll(keepingCapacity: true)
        occurrences.removeAll(keepingCapacity: true)
    }
}
