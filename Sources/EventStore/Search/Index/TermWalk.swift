import LMDB

/// Walks the terms of several segments together, in key order: each step yields one term key
/// and its posting list in every segment that holds it (in the segments' order, so in doc-id
/// order). Used by merges, verification and term listings.
///
/// Each segment is read ahead in batches (``batchEntries`` terms or ``batchBytes`` of lists,
/// with one cursor seek per batch), copied out of the map, so the walk stays valid while the
/// same transaction writes to `search_segments` (a merge writing its output and deleting the
/// terms it moved from its inputs): a batch is read after the terms before it, never the ones
/// it already returned.
struct TermWalk {
    /// The most terms, and about the most bytes of lists, read from one segment at a time.
    static let batchEntries = 128
    static let batchBytes = 64 << 10

    /// One segment's terms read ahead, and where its next batch starts.
    private struct Feed {
        /// The segment's key prefix (its id).
        let key: [UInt8]
        var entries: [(term: [UInt8], list: [UInt8])] = []
        var index = 0
        /// The last term read (the next batch starts after it), `nil` before the first batch.
        var last: [UInt8]?
        /// Whether the segment has no terms after the batch.
        var exhausted = false

        var head: (term: [UInt8], list: [UInt8])? { index < entries.count ? entries[index] : nil }
    }

    private let tx: ReadTransaction
    private let database: Database
    private let prefix: [UInt8]
    private var feeds: [Feed]

    /// Starts at the first term that starts with `prefix` and, when given, comes after `after`.
    init(tx: ReadTransaction, database: Database, segments: [UInt32], prefix: [UInt8] = [], after: [UInt8]? = nil)
        throws
    {
        self.tx = tx
        self.database = database
        self.prefix = prefix
        feeds = segments.map { Feed(key: IndexKeys.segment($0)) }
        let start = after.map { $0.lexicographicallyPrecedes(prefix) ? prefix : $0 } ?? prefix
        for index in feeds.indices { try refill(index, atLeast: start, skipping: after) }
    }

    /// Whether every segment is exhausted.
    var isAtEnd: Bool { feeds.allSatisfy { $0.head == nil } }

    /// The next term and its lists (segment index, list bytes), or `nil` at the end.
    mutating func next() throws -> (term: [UInt8], lists: [(segment: Int, list: [UInt8])])? {
        var least: [UInt8]?
        for feed in feeds {
            guard let head = feed.head else { continue }
            if least.map({ ByteKey.compare(head.term, $0) < 0 }) ?? true { least = head.term }
        }
        guard let term = least else { return nil }
        var lists: [(segment: Int, list: [UInt8])] = []
        for index in feeds.indices {
            guard let head = feeds[index].head, ByteKey.compare(head.term, term) == 0 else { continue }
            lists.append((index, head.list))
            feeds[index].index += 1
            if feeds[index].head == nil, !feeds[index].exhausted, let last = feeds[index].last {
                try refill(index, atLeast: last, skipping: last)
            }
        }
        return (term, lists)
    }

    /// Reads the next batch of segment `index`: its terms from `start` on (that start with the
    /// walk's prefix), without `skipped`.
    private mutating func refill(_ index: Int, atLeast start: [UInt8], skipping skipped: [UInt8]?) throws {
        let segmentKey = feeds[index].key
        let prefix = self.prefix
        var entries: [(term: [UInt8], list: [UInt8])] = []
        entries.reserveCapacity(16)
        var exhausted = true
        try tx.withCursor(on: database) { cursor in
            var entry = try (segmentKey + start).withUnsafeBytes { try cursor.seek(atLeast: $0) }
            var bytes = 0
            while let current = entry {
                guard current.key.starts(with: segmentKey) else { break }
                let term = UnsafeRawBufferPointer(rebasing: current.key[(current.key.startIndex + segmentKey.count)...])
                guard term.starts(with: prefix) else { break }
                if let skipped, term.elementsEqual(skipped) {
                    entry = try cursor.next()
                    continue
                }
                if entries.count == TermWalk.batchEntries || bytes >= TermWalk.batchBytes {
                    exhausted = false
                    break
                }
                entries.append((Array(term), Array(current.value)))
                bytes += current.value.count
                entry = try cursor.next()
            }
        }
        feeds[index].entries = entries
        feeds[index].index = 0
        feeds[index].exhausted = exhausted
        if let last = entries.last { feeds[index].last = last.term }
    }
}
