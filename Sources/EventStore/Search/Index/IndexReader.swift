import LMDB

/// The read side of the search index in one snapshot: a term's postings across the live
/// segments, in doc-id order, without the dead documents.
struct IndexReader {
    let tx: ReadTransaction
    let databases: ProjectionDatabases
    /// The segments to read, in doc-id order: the live ones and the output of a merge that
    /// moves terms (``SegmentDirectory/readableSegments``).
    let readableSegments: [SegmentDirectory.Segment]
    /// Their ids.
    let segments: [UInt32]
    /// The merge under way when it moves terms (its segments' terms change as it goes on).
    let movingMerge: SegmentDirectory.Merge?
    /// Which documents are dead (a cache of the bitmap's chunks read so far).
    var dead: DeadDocuments.Reader

    init(tx: ReadTransaction, databases: ProjectionDatabases) throws {
        self.tx = tx
        self.databases = databases
        let directory = try SegmentDirectory.load(tx: tx, state: databases.state)
        readableSegments = directory.readableSegments
        segments = readableSegments.map(\.id)
        movingMerge = directory.merge.flatMap { $0.movesTerms ? $0 : nil }
        dead = DeadDocuments.Reader(tx: tx, database: databases.state)
    }

    /// A term's stored lists, one per live segment that holds it, in segment order. The buffers
    /// point into the snapshot and stay valid while its transaction lives.
    struct TermLists {
        var term: [UInt8]
        var lists: [UnsafeRawBufferPointer]

        /// The postings the lists hold, dead ones included: a cheap upper bound of the term's
        /// document frequency, read from the lists' headers.
        func estimatedFrequency() throws -> Int {
            try lists.reduce(0) { $0 + (try PostingList.count(in: $1)) }
        }
    }

    /// The lists of `term` in the live segments.
    func lists(of term: [UInt8]) throws -> TermLists {
        var lists: [UnsafeRawBufferPointer] = []
        try tx.withCursor(on: databases.searchSegments) { cursor in
            for segment in segments {
                if let list = try SegmentEntry.list(of: term, segment: IndexKeys.segment(segment), cursor: cursor) {
                    lists.append(list)
                }
            }
        }
        return TermLists(term: term, lists: lists)
    }

    /// The terms (in any live segment) that start with `prefix`, the `limit` least, sorted, each
    /// with its lists: read in one scan of each segment's key range. A list whose documents all
    /// died is left out, so terms that only deleted or replaced versions held take no place
    /// among the `limit`.
    mutating func expand(prefix: [UInt8], limit: Int) throws -> [TermLists] {
        var dead = self.dead
        defer { self.dead = dead }
        var found: [ByteKey: [(segment: Int, list: UnsafeRawBufferPointer)]] = [:]
        try tx.withCursor(on: databases.searchSegments) { cursor in
            try prefix.withUnsafeBytes { prefixBytes in
                for (position, segment) in segments.enumerated() {
                    let segmentKey = IndexKeys.segment(segment)
                    var entry = try SegmentEntry.seek(cursor, segment: segmentKey, term: prefix)
                    var taken = 0
                    var ended = false
                    while !ended, let current = entry, current.key.starts(with: segmentKey) {
                        let first = SegmentEntry.firstTerm(of: current.key, segment: segmentKey)
                        try SegmentEntry.forEachTerm(first: first, value: current.value) { term, list in
                            if compareBytes(term, prefixBytes) < 0 { return true }
                            guard term.starts(with: prefixBytes), taken < limit else {
                                ended = true
                                return false
                            }
                            guard try dead.hasLive(in: list) else { return true }
                            found[ByteKey(Array(term)), default: []].append((position, list))
                            taken += 1
                            return true
                        }
                        if !ended { entry = try cursor.next() }
                    }
                }
            }
        }
        return found.keys.sorted().prefix(limit).map { term in
            TermLists(term: term.bytes, lists: found[term]!.sorted { $0.segment < $1.segment }.map(\.list))
        }
    }

    /// Calls `body` with every live posting of the lists, in doc-id order; returns how many
    /// there were (the term's exact document frequency among live documents).
    @discardableResult
    mutating func forEachLivePosting(in term: TermLists, _ body: (Posting) throws -> Void) throws -> Int {
        try term.lists.reduce(0) { $0 + (try dead.forEachLive(in: $1, body)) }
    }

    /// The live postings of the lists, in doc-id order.
    mutating func livePostings(in term: TermLists) throws -> [Posting] {
        var postings: [Posting] = []
        postings.reserveCapacity(try term.estimatedFrequency())
        try forEachLivePosting(in: term) { postings.append($0) }
        return postings
    }

    /// The item key of a document, or `nil` when its entry is gone.
    func itemKey(of docID: UInt32) throws -> [UInt8]? {
        try IndexKeys.document(docID).withUnsafeBytes { key in
            try tx.value(forKey: key, in: databases.searchDocuments).map { Array(try IndexedDocument.itemKey(in: $0)) }
        }
    }
}
