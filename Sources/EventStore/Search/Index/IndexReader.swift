import LMDB

/// The read side of the search index in one snapshot: a term's postings across the live
/// segments, in doc-id order, without the dead documents.
struct IndexReader {
    let tx: ReadTransaction
    let databases: ProjectionDatabases
    /// The live segments, in doc-id order (from the ``SegmentDirectory``).
    let segments: [UInt32]
    private var dead: DeadDocuments.Reader

    init(tx: ReadTransaction, databases: ProjectionDatabases) throws {
        self.tx = tx
        self.databases = databases
        segments = try SegmentDirectory.load(tx: tx, state: databases.state).segments.map(\.id)
        dead = DeadDocuments.Reader(tx: tx, database: databases.searchDeleted)
    }

    /// Calls `body` with the stored list of `term` in each live segment that holds it, in order.
    func forEachList(of term: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var key = IndexKeys.segment(0, term)
        for segment in segments {
            withUnsafeBytes(of: segment.bigEndian) { id in
                for index in 0..<4 { key[index] = id[index] }
            }
            if let list = try key.withUnsafeBytes({ try tx.value(forKey: $0, in: databases.searchSegments) }) {
                try body(list)
            }
        }
    }

    /// The postings `term` has in all segments, dead ones included: a cheap upper bound of its
    /// document frequency, read from the lists' headers.
    func estimatedFrequency(of term: [UInt8]) throws -> Int {
        var total = 0
        try forEachList(of: term) { total += try PostingList.count(in: $0) }
        return total
    }

    /// Calls `body` with every live posting of `term`, in doc-id order; returns how many there
    /// were (the term's exact document frequency among live documents).
    @discardableResult
    mutating func forEachLivePosting(of term: [UInt8], _ body: (Posting) throws -> Void) throws -> Int {
        var live = 0
        var dead = self.dead
        defer { self.dead = dead }
        try forEachList(of: term) { list in
            var decoder = try PostingList.Decoder(list)
            while let posting = try decoder.next() {
                if try dead.isDead(posting.docID) { continue }
                live += 1
                try body(posting)
            }
        }
        return live
    }

    /// The live postings of `term`, in doc-id order.
    mutating func livePostings(of term: [UInt8]) throws -> [Posting] {
        var postings: [Posting] = []
        try forEachLivePosting(of: term) { postings.append($0) }
        return postings
    }

    /// The term keys (in any live segment) that start with `prefix`: the `limit` least, sorted.
    func terms(withPrefix prefix: [UInt8], limit: Int) throws -> [[UInt8]] {
        var found = Set<[UInt8]>()
        try tx.withCursor(on: databases.searchSegments) { cursor in
            for segment in segments {
                let start = IndexKeys.segment(segment, prefix)
                var entry = try start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                var taken = 0
                while let current = entry, current.key.starts(with: start), taken < limit {
                    found.insert(Array(current.key[(current.key.startIndex + 4)...]))
                    taken += 1
                    entry = try cursor.next()
                }
            }
        }
        return Array(found.sorted { $0.lexicographicallyPrecedes($1) }.prefix(limit))
    }

    /// The item key of a document, or `nil` when its entry is gone.
    func itemKey(of docID: UInt32) throws -> [UInt8]? {
        try IndexKeys.document(docID).withUnsafeBytes { key in
            try tx.value(forKey: key, in: databases.searchDocuments).map { Array(try IndexedDocument.itemKey(in: $0)) }
        }
    }
}
