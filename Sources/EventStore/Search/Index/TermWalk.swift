import LMDB

/// Walks the terms of several segments together, in key order: each step yields one term key
/// and its posting list in every segment that holds it (in the segments' order, so in doc-id
/// order). Used by merges, verification and term listings.
///
/// The lists are copied out of the map when read, so the walk stays valid while the same
/// transaction writes to `search_segments` (a merge writing its output and deleting the terms
/// it moved from its inputs).
struct TermWalk {
    private let tx: ReadTransaction
    private let database: Database
    private let segments: [UInt32]
    private let prefix: [UInt8]
    /// Per segment: its next term key (after the segment id) and list, or `nil` when done.
    private var heads: [(term: [UInt8], list: [UInt8])?]

    /// Starts at the first term that starts with `prefix` and, when given, comes after `after`.
    init(tx: ReadTransaction, database: Database, segments: [UInt32], prefix: [UInt8] = [], after: [UInt8]? = nil)
        throws
    {
        self.tx = tx
        self.database = database
        self.segments = segments
        self.prefix = prefix
        heads = []
        for index in segments.indices {
            heads.append(
                try head(
                    of: index, atLeast: after.map { $0.lexicographicallyPrecedes(prefix) ? prefix : $0 } ?? prefix,
                    skipping: after))
        }
    }

    /// Whether every segment is exhausted.
    var isAtEnd: Bool { heads.allSatisfy { $0 == nil } }

    /// The next term and its lists (segment index, list bytes), or `nil` at the end.
    mutating func next() throws -> (term: [UInt8], lists: [(segment: Int, list: [UInt8])])? {
        var least: [UInt8]?
        for case let head? in heads where least.map({ ByteKey.compare(head.term, $0) < 0 }) ?? true {
            least = head.term
        }
        guard let term = least else { return nil }
        var lists: [(segment: Int, list: [UInt8])] = []
        for index in heads.indices {
            guard let head = heads[index], ByteKey.compare(head.term, term) == 0 else { continue }
            lists.append((index, head.list))
            heads[index] = try self.head(of: index, atLeast: term, skipping: term)
        }
        return (term, lists)
    }

    private func head(of index: Int, atLeast start: [UInt8], skipping skipped: [UInt8]?) throws -> (
        term: [UInt8], list: [UInt8]
    )? {
        let segmentKey = IndexKeys.segment(segments[index])
        let seekKey = segmentKey + start
        return try tx.withCursor(on: database) { cursor in
            var entry = try seekKey.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry {
                guard current.key.starts(with: segmentKey) else { return nil }
                let term = UnsafeRawBufferPointer(rebasing: current.key[(current.key.startIndex + 4)...])
                guard term.starts(with: prefix) else { return nil }
                if let skipped, term.elementsEqual(skipped) {
                    entry = try cursor.next()
                    continue
                }
                return (Array(term), Array(current.value))
            }
            return nil
        }
    }
}
