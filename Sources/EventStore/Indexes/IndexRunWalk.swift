import LMDB

/// Walks the index entries of several runs as one sorted sequence (a k-way merge): each key
/// once, from the newest run that holds it, ascending or descending, within a key range.
///
/// Keys are entry keys (``IndexKey``: index id, components, item id) without their run prefix.
/// Each run is read a block at a time (``IndexRunBlock``), decoded into memory the walk owns, so
/// writes to the database during the walk (a merge's output) leave it valid.
struct IndexRunWalk {
    /// One run's position: its cursor, its current block, and the entry within it (`nil` once
    /// the run has no more entries in the range).
    private struct Head {
        let cursor: Cursor
        let prefix: [UInt8]
        let block = IndexRunBlock.Decoded()
        var position: Int?
    }

    private var heads: [Head]
    /// Each head's current key (a null pointer when the head is done), kept apart from the
    /// heads so that choosing the next key touches no reference.
    private var current: [UnsafeRawBufferPointer]
    private let start: [UInt8]
    private let end: [UInt8]?
    private let descending: Bool

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
                heads: zip(runs, cursors).map { Head(cursor: $1, prefix: IndexRuns.prefix($0.id)) },
                start: start, end: end, descending: descending)
            for index in walk.heads.indices { try walk.position(index) }
            return try body(&walk)
        }
    }

    /// ``withWalk(over:in:tx:start:end:descending:_:)`` over the runs of the directory that
    /// generation database `state` holds (``IndexRunDirectory``).
    static func withWalk<T>(
        overRunsListedIn state: Database, in database: Database, tx: ReadTransaction, start: [UInt8] = [],
        end: [UInt8]? = nil, descending: Bool = false, _ body: (inout IndexRunWalk) throws -> T
    ) throws -> T {
        try withWalk(
            over: try IndexRunDirectory.load(tx: tx, state: state).runs, in: database, tx: tx, start: start, end: end,
            descending: descending, body)
    }

    private init(heads: [Head], start: [UInt8], end: [UInt8]?, descending: Bool) {
        self.heads = heads
        self.current = Array(repeating: UnsafeRawBufferPointer(start: nil, count: 0), count: heads.count)
        self.start = start
        self.end = end
        self.descending = descending
    }

    /// Whether a database entry is a block of head `index`'s run.
    private func inRun(_ entry: CursorEntry?, _ index: Int) -> Bool {
        guard let entry, entry.key.count > IndexRuns.prefixBytes else { return false }
        return heads[index].prefix.withUnsafeBytes {
            compareBytes(UnsafeRawBufferPointer(rebasing: entry.key[..<IndexRuns.prefixBytes]), $0) == 0
        }
    }

    /// Decodes the block `entry` into head `index` when it belongs to the head's run.
    private mutating func load(_ entry: CursorEntry?, into index: Int) throws -> Bool {
        guard inRun(entry, index), let entry else {
            heads[index].position = nil
            return false
        }
        try IndexRunBlock.decode(
            first: UnsafeRawBufferPointer(rebasing: entry.key[IndexRuns.prefixBytes...]), value: entry.value,
            into: heads[index].block)
        return true
    }

    /// Compares head `index`'s current key with `other`.
    private func compare(_ index: Int, with other: [UInt8]) -> Int {
        compare(index, at: heads[index].position!, with: other)
    }

    /// Moves head `index` to the first entry of the range in the walk's direction.
    private mutating func position(_ index: Int) throws {
        let cursor = heads[index].cursor
        let prefix = heads[index].prefix
        if descending {
            // The block before the first key at or after the end holds the greatest keys below it.
            let bound = end.map { prefix + $0 } ?? IndexKey.successor(of: prefix)
            let entry =
                try bound.flatMap { try cursor.seek(atLeast: $0) } != nil ? try cursor.previous() : try cursor.last()
            guard try load(entry, into: index) else { return }
            var position = heads[index].block.entries.count - 1
            if let end { while position >= 0 && compare(index, at: position, with: end) >= 0 { position -= 1 } }
            heads[index].position = position >= 0 ? position : nil
        } else {
            // The block holding `start` may begin before it: the one before the first block at
            // or after it.
            let target = prefix + start
            var entry = try cursor.seek(atLeast: target)
            let exact = entry.map { key in target.withUnsafeBytes { compareBytes(key.key, $0) == 0 } } ?? false
            if !exact {
                let previous = entry == nil ? try cursor.last() : try cursor.previous()
                if inRun(previous, index) {
                    entry = previous
                } else if entry != nil {
                    // Back to the first block at or after `start` (a seek again: a step back from
                    // the first key of the database leaves the cursor where it was).
                    entry = try cursor.seek(atLeast: target)
                }
            }
            guard try load(entry, into: index) else { return }
            var position = 0
            while position < heads[index].block.entries.count && compare(index, at: position, with: start) < 0 {
                position += 1
            }
            if position == heads[index].block.entries.count {
                guard try load(try cursor.next(), into: index) else { return }
                position = 0
            }
            heads[index].position = position
        }
        if !inRange(index) { heads[index].position = nil }
        updateCurrent(index)
    }

    /// Sets head `index`'s entry in ``current``.
    private mutating func updateCurrent(_ index: Int) {
        current[index] =
            heads[index].position.map { heads[index].block.key($0) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
    }

    private func compare(_ index: Int, at position: Int, with other: [UInt8]) -> Int {
        let key = heads[index].block.key(position)
        return other.withUnsafeBytes { compareBytes(key, $0) }
    }

    /// Whether head `index`'s current key is within the range.
    private func inRange(_ index: Int) -> Bool {
        guard heads[index].position != nil else { return false }
        if compare(index, with: start) < 0 { return false }
        if let end, compare(index, with: end) >= 0 { return false }
        return true
    }

    /// Steps head `index` to its next entry in the walk's direction.
    private mutating func advance(_ index: Int) throws {
        defer { updateCurrent(index) }
        guard var position = heads[index].position else { return }
        let cursor = heads[index].cursor
        if descending {
            position -= 1
            if position < 0 {
                guard try load(try cursor.previous(), into: index) else { return }
                position = heads[index].block.entries.count - 1
            }
            heads[index].position = position
            if compare(index, with: start) < 0 { heads[index].position = nil }
        } else {
            position += 1
            if position == heads[index].block.entries.count {
                guard try load(try cursor.next(), into: index) else { return }
                position = 0
            }
            heads[index].position = position
            if let end, compare(index, with: end) >= 0 { heads[index].position = nil }
        }
    }

    /// Calls `body` with the next key of the walk (its run prefix removed) and whether it is
    /// live, skipping the same key in older runs; returns `false` when the walk is over. The
    /// key is valid during the call.
    mutating func next(_ body: (_ key: UnsafeRawBufferPointer, _ live: Bool) throws -> Void) throws -> Bool {
        var best = -1
        var bestKey = UnsafeRawBufferPointer(start: nil, count: 0)
        // Older heads holding the best key so far: their entries are overridden.
        var tied: [Int] = []
        // Newest first, so that on equal keys the newest run is the one kept.
        for index in current.indices.reversed() {
            let key = current[index]
            guard key.baseAddress != nil else { continue }
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
        guard best >= 0, let position = heads[best].position else { return false }
        for index in tied { try advance(index) }
        try body(bestKey, heads[best].block.entries[position].live)
        try advance(best)
        return true
    }

    /// Calls `body` with each live key until it returns `false`.
    mutating func forEachLive(_ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var going = true
        while going, try next({ key, live in if live { going = try body(key) } }) {}
    }
}
