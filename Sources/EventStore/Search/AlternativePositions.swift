/// The positions of every index term a query term stands for (a prefix's expansions, close
/// terms), for the phrase check of a candidate whose best-scoring terms do not make the phrase
/// (see ``SearchEngine``).
///
/// Read lazily: per term, a cursor over its stored lists that moves forward to each document
/// asked for. Candidates are checked in doc-id order, so each list is decoded at most once, and
/// only as far as the last candidate that needed it; most queries never ask.
struct AlternativePositions {
    /// A term's lists (one per segment, in doc-id order) and where the cursor stands.
    private struct Cursor {
        let lists: [UnsafeRawBufferPointer]
        var list = -1
        var decoder: PostingList.Decoder?
        var current: Posting?
        var ended = false

        init(lists: [UnsafeRawBufferPointer]) { self.lists = lists }

        /// The term's positions in `docID`, or `nil` when the term is not in it.
        mutating func positions(in docID: UInt32) throws -> UnsafeRawBufferPointer? {
            if let current, current.docID > docID { self = Cursor(lists: lists) }
            while true {
                if let current, current.docID >= docID { return current.docID == docID ? current.positions : nil }
                if ended { return nil }
                if let posting = try decoder?.next() {
                    current = posting
                    continue
                }
                list += 1
                guard list < lists.count else {
                    ended = true
                    return nil
                }
                decoder = try PostingList.Decoder(lists[list])
            }
        }
    }

    private var cursors: [Int: [Cursor]] = [:]

    /// Makes `group`'s terms available.
    mutating func add(group: Int, terms: [IndexReader.TermLists]) {
        cursors[group] = terms.map { Cursor(lists: $0.lists) }
    }

    /// Whether `group`'s terms are available.
    func has(group: Int) -> Bool { cursors[group] != nil }

    /// The positions of each of `group`'s terms in `docID`, or `nil` when the group is not
    /// available.
    mutating func positions(group: Int, _ docID: UInt32) throws -> [UnsafeRawBufferPointer]? {
        guard var terms = cursors[group] else { return nil }
        var found: [UnsafeRawBufferPointer] = []
        for index in terms.indices {
            if let positions = try terms[index].positions(in: docID) { found.append(positions) }
        }
        cursors[group] = terms
        return found
    }
}
