import LMDB

/// Walks the terms of several segments together, in key order: each step yields one term key
/// and its posting list in every segment that holds it (in the segments' order, so in doc-id
/// order). Used by merges, verification and term listings.
///
/// Each segment is read ahead in batches (``batchEntries`` terms or ``batchBytes`` of lists,
/// with one cursor seek per batch; a ``SegmentEntry`` block gives several terms), copied out of
/// the map into one buffer per batch, so the walk stays valid while the same transaction writes
/// to `search_segments` (a merge writing its output and deleting the terms it moved from its
/// inputs): a batch is read after the
/// terms before it, never the ones it already returned. The lists it yields are slices of that
/// buffer: a step allocates the term and the list of lists, not a copy per list.
struct TermWalk {
    /// The most terms, and about the most bytes of lists, read from one segment at a time.
    static let batchEntries = 128
    static let batchBytes = 64 << 10

    /// One segment's terms read ahead, and where its next batch starts.
    private struct Feed {
        /// The segment's key prefix (its id).
        let key: [UInt8]
        /// The batch's terms and lists, back to back.
        var buffer: [UInt8] = []
        var entries: [(term: Range<Int>, list: Range<Int>)] = []
        var index = 0
        /// The last term read (the next batch starts after it), `nil` before the first batch.
        var last: [UInt8]?
        /// Whether the segment has no terms after the batch.
        var exhausted = false

        var hasHead: Bool { index < entries.count }

        /// Compares this feed's current term with `other`'s (both must have one).
        func compareHead(with other: Feed) -> Int {
            buffer.withUnsafeBytes { mine in
                other.buffer.withUnsafeBytes { theirs in
                    compareBytes(
                        UnsafeRawBufferPointer(rebasing: mine[entries[index].term]),
                        UnsafeRawBufferPointer(rebasing: theirs[other.entries[other.index].term]))
                }
            }
        }
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
    var isAtEnd: Bool { !feeds.contains { $0.hasHead } }

    /// The next term and its lists (segment index, list bytes), or `nil` at the end.
    mutating func next() throws -> (term: [UInt8], lists: [(segment: Int, list: ArraySlice<UInt8>)])? {
        var least: Int?
        for index in feeds.indices where feeds[index].hasHead {
            if let current = least, feeds[index].compareHead(with: feeds[current]) >= 0 { continue }
            least = index
        }
        guard let least else { return nil }
        let leastFeed = feeds[least]
        let term = Array(leastFeed.buffer[leastFeed.entries[leastFeed.index].term])
        var lists: [(segment: Int, list: ArraySlice<UInt8>)] = []
        lists.reserveCapacity(feeds.count - least)
        for index in least..<feeds.count where feeds[index].hasHead {
            if index != least && feeds[index].compareHead(with: leastFeed) != 0 { continue }
            let feed = feeds[index]
            lists.append((index, feed.buffer[feed.entries[feed.index].list]))
            feeds[index].index += 1
            if !feeds[index].hasHead, !feeds[index].exhausted, let last = feeds[index].last {
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
        // Taken out of the feed so that, once no slice of it is held, it is reused in place.
        var buffer = feeds[index].buffer
        feeds[index].buffer = []
        buffer.removeAll(keepingCapacity: true)
        var entries: [(term: Range<Int>, list: Range<Int>)] = []
        entries.reserveCapacity(16)
        var exhausted = true
        try tx.withCursor(on: database) { cursor in
            var entry = try SegmentEntry.seek(cursor, segment: segmentKey, term: start)
            var bytes = 0
            var ended = false
            try start.withUnsafeBytes { start in
                while !ended, let current = entry, current.key.starts(with: segmentKey) {
                    let first = SegmentEntry.firstTerm(of: current.key, segment: segmentKey)
                    try SegmentEntry.forEachTerm(first: first, value: current.value) { term, list in
                        if compareBytes(term, start) < 0 { return true }
                        if let skipped, term.elementsEqual(skipped) { return true }
                        guard term.starts(with: prefix) else {
                            ended = true
                            return false
                        }
                        if entries.count == TermWalk.batchEntries || bytes >= TermWalk.batchBytes {
                            exhausted = false
                            ended = true
                            return false
                        }
                        let termStart = buffer.count
                        buffer.append(contentsOf: term)
                        buffer.append(contentsOf: list)
                        entries.append((termStart..<termStart + term.count, termStart + term.count..<buffer.count))
                        bytes += list.count
                        return true
                    }
                    if !ended { entry = try cursor.next() }
                }
            }
        }
        if let last = entries.last { feeds[index].last = Array(buffer[last.term]) }
        feeds[index].buffer = buffer
        feeds[index].entries = entries
        feeds[index].index = 0
        feeds[index].exhausted = exhausted
    }
}
