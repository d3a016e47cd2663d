import LMDB

/// Walks the index entries of several runs as one sorted sequence (a k-way merge): each key
/// once, from the newest run that holds it, ascending or descending, within a key range.
///
/// Keys are entry keys (``IndexKey``: index id, components, item id) without their run prefix.
/// A run's cursor stops at the end of the range or of its run, whichever comes first.
struct IndexRunWalk {
    /// One run's position: its cursor and current entry (borrowed from the map: valid until
    /// the database is written, see ``refresh()``).
    private struct Head {
        let cursor: Cursor
        let prefix: [UInt8]
        var entry: CursorEntry?
    }

    private var heads: [Head]
    private let start: [UInt8]
    private let end: [UInt8]?
    private let descending: Bool
    /// Whether every head has been positioned (see ``inRange(_:)``).
    private var positioned = false

    /// Opens the walk over `runs` (oldest first) and calls `body` with it; the walk's cursors
    /// close when `body` returns.
    ///
    /// - Parameters:
    ///   - start: The smallest entry key of the range.
    ///   - end: The end of the range (exclusive; `nil`: every key from `start`).
    static func withWalk<T>(
        over runs: [IndexRunDirectory.Run], in database: Database, tx: ReadTransaction, start: [UInt8] = [],
        end: [UInt8]? = nil, descending: Bool = false, _ body: (inout IndexRunWalk) throws -> T
    ) throws -> T {
        try tx.withCursors(on: database, count: runs.count) { cursors in
            var walk = IndexRunWalk(
                heads: zip(runs, cursors).map { Head(cursor: $1, prefix: IndexRuns.prefix($0.id), entry: nil) },
                start: start, end: end, descending: descending)
            for index in walk.heads.indices { try walk.position(index) }
            walk.positioned = true
            return try body(&walk)
        }
    }

    private init(heads: [Head], start: [UInt8], end: [UInt8]?, descending: Bool) {
        self.heads = heads
        self.start = start
        self.end = end
        self.descending = descending
    }

    /// Moves head `index` to the first entry of the range in the walk's direction.
    private mutating func position(_ index: Int) throws {
        let cursor = heads[index].cursor
        let prefix = heads[index].prefix
        var entry: CursorEntry?
        if descending {
            let bound = end.map { prefix + $0 } ?? IndexKey.successor(of: prefix)
            if let bound, try cursor.seek(atLeast: bound) != nil {
                entry = try cursor.previous()
            } else {
                entry = try cursor.last()
            }
        } else {
            entry = try cursor.seek(atLeast: prefix + start)
        }
        heads[index].entry = entry
        heads[index].entry = try inRange(index) ? entry : nil
    }

    /// Whether head `index`'s entry belongs to its run and to the range.
    private func inRange(_ index: Int) throws -> Bool {
        guard let entry = heads[index].entry else { return false }
        guard entry.key.count >= IndexRuns.prefixBytes,
            heads[index].prefix.withUnsafeBytes({
                compareBytes(UnsafeRawBufferPointer(rebasing: entry.key[..<IndexRuns.prefixBytes]), $0) == 0
            })
        else { return false }
        let key = UnsafeRawBufferPointer(rebasing: entry.key[IndexRuns.prefixBytes...])
        // Keys move away from the side the walk started on: only the other bound can be crossed
        // once a head is positioned.
        if descending || !positioned {
            guard start.withUnsafeBytes({ compareBytes(key, $0) >= 0 }) else { return false }
        }
        guard let end, !descending || !positioned else { return true }
        return end.withUnsafeBytes { compareBytes(key, $0) < 0 }
    }

    /// Steps head `index` to its next entry in the walk's direction.
    private mutating func advance(_ index: Int) throws {
        let cursor = heads[index].cursor
        heads[index].entry = try descending ? cursor.previous() : cursor.next()
        if heads[index].entry != nil, try !inRange(index) { heads[index].entry = nil }
    }

    /// Calls `body` with the next key of the walk (its run prefix removed) and whether it is
    /// live, skipping the same key in older runs; returns `false` when the walk is over. The
    /// key is valid until the next call or the next write to the database.
    mutating func next(_ body: (_ key: UnsafeRawBufferPointer, _ live: Bool) throws -> Void) throws -> Bool {
        var best = -1
        var bestKey = UnsafeRawBufferPointer(start: nil, count: 0)
        // Older heads holding the best key so far: their entries are overridden.
        var tied: [Int] = []
        // Newest first, so that on equal keys the newest run is the one kept.
        for index in heads.indices.reversed() {
            guard let entry = heads[index].entry else { continue }
            let key = UnsafeRawBufferPointer(rebasing: entry.key[IndexRuns.prefixBytes...])
            if best < 0 {
                best = index
                bestKey = key
                continue
            }
            let order = compareBytes(key, bestKey)
            if order == 0 {
                tied.append(index)
            } else if descending ? order > 0 : order < 0 {
                best = index
                bestKey = key
                tied.removeAll(keepingCapacity: true)
            }
        }
        guard best >= 0, let entry = heads[best].entry else { return false }
        for index in tied { try advance(index) }
        try body(bestKey, entry.value.isEmpty)
        try advance(best)
        return true
    }

    /// Calls `body` with each live key until it returns `false`.
    mutating func forEachLive(_ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var going = true
        while going, try next({ key, live in if live { going = try body(key) } }) {}
    }

    /// Reloads each head's entry from its cursor, after writes to the database moved the data
    /// the heads borrowed (LMDB keeps a write transaction's cursors positioned across writes).
    mutating func refresh() throws {
        for index in heads.indices where heads[index].entry != nil {
            heads[index].entry = try heads[index].cursor.current()
        }
    }
}
