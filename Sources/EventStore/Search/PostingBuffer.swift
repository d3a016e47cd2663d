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
        var rank = [Int32](repeating: 0, count: keys.count)
        for (position, index) in keys.indices.sorted(by: { keys[$0].lexicographicallyPrecedes(keys[$1]) }).enumerated() {
            rank[index] = Int32(position)
        }
        // Order by term, then posting, then time (the original position breaks ties).
        struct Entry {
            var rank: UInt32
            var index: UInt32
            var posting: Posting
            var isAdd: Bool
        }
        var entries = changes.enumerated().map { index, change in
            Entry(rank: UInt32(rank[Int(change.term)]), index: UInt32(index), posting: change.posting, isAdd: change.isAdd)
        }
        entries.sort { ($0.rank, $0.posting, $0.index) < ($1.rank, $1.posting, $1.index) }
        var termOfRank = [Int32](repeating: 0, count: rank.count)
        for (term, position) in rank.enumerated() { termOfRank[Int(position)] = Int32(term) }
        try tx.withWriteCursor(on: database) { cursor in
            var position = 0
            while position < entries.count {
                let rankOfTerm = entries[position].rank
                let term = termOfRank[Int(rankOfTerm)]
                var removed: [Posting] = []
                var added: [Posting] = []
                while position < entries.count && entries[position].rank == rankOfTerm {
                    let first = entries[position]
                    var last = first
                    position += 1
                    while position < entries.count && entries[position].rank == rankOfTerm
                        && entries[position].posting == first.posting
                    {
                        last = entries[position]
                        position += 1
                    }
                    if first.isAdd && last.isAdd { added.append(first.posting.bigEndian) }
                    if !first.isAdd && !last.isAdd { removed.append(first.posting) }
                }
                try keys[Int(term)].withUnsafeBytes { key in
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
