import LMDB

/// Walks the index entries of several runs as one sorted sequence (a k-way merge over a loser
/// tree): each key once, from the newest run that holds it, ascending or descending, within a
/// key range.
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
    /// The tournament over the heads: `losers[node]` is the head that lost the match at
    /// internal node `node` (1..<heads.count), `winner` the head whose key is next.
    private var losers: [Int]
    private var winner = 0
    /// The key ``next(_:)`` yielded last, while it skips older runs' entries of it.
    private let yielded = KeyBuffer()
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
            walk.playTournament()
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
        self.losers = Array(repeating: 0, count: heads.count)
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

    /// Whether head `lhs`'s current key comes before head `rhs`'s in the walk: the smaller key
    /// (the greater when descending), on equal keys the newer run, a head that is done last.
    @inline(__always)
    private func precedes(_ lhs: Int, _ rhs: Int) -> Bool {
        let left = current[lhs]
        let right = current[rhs]
        guard left.baseAddress != nil else { return false }
        guard right.baseAddress != nil else { return true }
        let order = compareBytes(left, right)
        if order == 0 { return lhs > rhs }
        return descending ? order > 0 : order < 0
    }

    /// Plays the tournament over every head (``losers``, ``winner``): once, after the heads are
    /// positioned.
    private mutating func playTournament() {
        let count = heads.count
        guard count > 1 else { return }
        // winners[node]: the head that wins the subtree under `node`; the heads are nodes
        // count..<2·count, and node n's children are 2n and 2n + 1.
        var winners = [Int](repeating: 0, count: 2 * count)
        for index in 0..<count { winners[count + index] = index }
        for node in stride(from: count - 1, through: 1, by: -1) {
            let (left, right) = (winners[2 * node], winners[2 * node + 1])
            let leftWins = precedes(left, right)
            winners[node] = leftWins ? left : right
            losers[node] = leftWins ? right : left
        }
        winner = winners[1]
    }

    /// Plays again the matches of head `index`, whose key changed, up to the root: log₂ of the
    /// number of runs comparisons.
    private mutating func replay(_ index: Int) {
        let count = heads.count
        var candidate = index
        var node = (count + index) / 2
        while node >= 1 {
            if precedes(losers[node], candidate) { swap(&losers[node], &candidate) }
            node /= 2
        }
        winner = candidate
    }

    /// Calls `body` with the next key of the walk (its run prefix removed) and whether it is
    /// live, skipping the same key in older runs; returns `false` when the walk is over. The
    /// key is valid during the call.
    ///
    /// The heads play a tournament (a loser tree, as in an external sort's merge): the winner is
    /// the next key, and advancing it replays only its own matches.
    mutating func next(_ body: (_ key: UnsafeRawBufferPointer, _ live: Bool) throws -> Void) throws -> Bool {
        guard !heads.isEmpty else { return false }
        let best = winner
        let key = current[best]
        guard key.baseAddress != nil, let position = heads[best].position else { return false }
        try body(key, heads[best].block.entries[position].live)
        // Older runs' entries of the same key are overridden: they win next, one after another
        // (on equal keys the newer run wins), and are skipped. The key is copied first, as
        // advancing may decode a new block over it.
        yielded.replace(with: key)
        try advance(best)
        replay(best)
        while current[winner].baseAddress != nil && compareBytes(current[winner], yielded.bytes) == 0 {
            let skipped = winner
            try advance(skipped)
            replay(skipped)
        }
        return true
    }

    /// Calls `body` with each live key until it returns `false`.
    mutating func forEachLive(_ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var going = true
        while going, try next({ key, live in if live { going = try body(key) } }) {}
    }
}
