import LMDB

/// Posting changes of one transaction, applied at the checkpoint term by term, in key order.
///
/// A document update removes and adds postings spread over the whole index. Buffering them lets
/// the flush visit each term once per transaction — one B-tree descent, then its postings
/// deleted and inserted together (`MDB_MULTIPLE`) — instead of one descent per posting, and
/// keeps the per-posting work to an array append. Changes to the same posting within the
/// transaction net out (the index is consistent, so an add means "absent before" and a remove
/// "present before"), which keeps the bytes identical to immediate writes.
struct PostingBuffer {
    /// A posting as an integer: doc id, weighted frequency, weighted length. Its big-endian bytes
    /// are the stored value, so integer order is the database's order.
    typealias Posting = UInt64

    /// A term of one collection; tags are filter-only terms.
    struct Term: Hashable {
        var collection: String
        var text: String
        var isTag: Bool

        var key: [UInt8] {
            isTag
                ? SearchIndexWriter.tagKey(collection: collection, tag: text)
                : SearchIndexWriter.postingKey(collection: collection, term: text)
        }
    }

    private struct Change {
        var term: Int32
        var posting: Posting
        var isAdd: Bool
    }

    private var terms: [Term] = []
    private var termIndex: [Term: Int32] = [:]
    private var changes: [Change] = []

    var isEmpty: Bool { changes.isEmpty }

    static func posting(docID: UInt32, frequency: UInt16, length: UInt32) -> Posting {
        UInt64(docID) << 32 | UInt64(frequency) << 16 | UInt64(UInt16(min(length, UInt32(UInt16.max))))
    }

    mutating func add(_ posting: Posting, to term: Term) {
        changes.append(Change(term: index(of: term), posting: posting, isAdd: true))
    }

    mutating func remove(_ posting: Posting, from term: Term) {
        changes.append(Change(term: index(of: term), posting: posting, isAdd: false))
    }

    private mutating func index(of term: Term) -> Int32 {
        if let index = termIndex[term] { return index }
        let index = Int32(terms.count)
        terms.append(term)
        termIndex[term] = index
        return index
    }

    /// Applies every buffered change and empties the buffer.
    mutating func flush(tx: WriteTransaction, database: Database) throws {
        guard !isEmpty else { return }
        let keys = terms.map(\.key)
        // Group the changes by term (in time order), then visit terms in key order.
        var byTerm = [[Change]](repeating: [], count: terms.count)
        for change in changes { byTerm[Int(change.term)].append(change) }
        let termOrder = keys.indices.sorted { keys[$0].lexicographicallyPrecedes(keys[$1]) }
        try tx.withWriteCursor(on: database) { cursor in
            for term in termOrder {
                var removed: [Posting] = []
                var added: [Posting] = []
                // Net effect per posting: its first and last change (a stable sort keeps time order).
                let ordered = byTerm[term].enumerated().sorted { ($0.element.posting, $0.offset) < ($1.element.posting, $1.offset) }
                var position = 0
                while position < ordered.count {
                    let first = ordered[position].element
                    var last = first
                    position += 1
                    while position < ordered.count && ordered[position].element.posting == first.posting {
                        last = ordered[position].element
                        position += 1
                    }
                    if first.isAdd && last.isAdd { added.append(first.posting.bigEndian) }
                    if !first.isAdd && !last.isAdd { removed.append(first.posting) }
                }
                try keys[term].withUnsafeBytes { key in
                    for posting in removed {
                        try withUnsafeBytes(of: posting.bigEndian) { value in
                            if let found = try cursor.seek(key: key, valueAtLeast: value), found.value.elementsEqual(value) {
                                try cursor.deleteCurrent()
                            }
                        }
                    }
                    try added.withUnsafeBytes { values in try cursor.putDuplicates(values, elementSize: 8, forKey: key) }
                }
            }
        }
        self = PostingBuffer()
    }
}
