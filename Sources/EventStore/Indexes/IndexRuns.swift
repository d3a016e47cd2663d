import LMDB

/// The storage of the declared indexes (database `g<N>.indexes`): sorted runs of entries,
/// written whole and merged later, so that a commit writes its index changes as adjacent keys
/// (a few pages) wherever its items' values fall in the index.
///
/// ```
/// key   = run id (4 bytes, big-endian) · the first entry key of a block (IndexKey: index id ·
///         components · item id)
/// value = the block's entries, prefix-compressed, each live or a tombstone (IndexRunBlock)
/// ```
///
/// A commit's entries form one new run, keyed above every existing run, so its blocks are
/// appended. The newest run holding a key decides it (``IndexRunWalk``); a merge replaces
/// adjacent runs by one new run in their place among the others (``IndexRunDirectory``) and
/// drops the entries the newer of its inputs override, and, when it includes the oldest run, the
/// tombstones. Each merge runs whole inside the commit that makes it due: `fanIn` runs of one
/// size tier at a time, so an entry is rewritten about once per tier (log base 8 of the index's
/// size). Reading, writing and deleting go a block at a time.
enum IndexRuns {
    /// Bytes of a key's run prefix.
    static let prefixBytes = 4

    /// The key prefix of run `id`.
    static func prefix(_ id: UInt32) -> [UInt8] { withUnsafeBytes(of: id.bigEndian, Array.init) }

    /// Writes `entries` (entry keys, sorted by their bytes, each once, with whether it is live)
    /// as a new run, then makes the merges that fall due, all in `tx`.
    static func write(
        _ entries: [(key: [UInt8], live: Bool)], tx: WriteTransaction, database: Database, state: Database
    ) throws {
        try write(count: entries.count, tx: tx, database: database, state: state) { put in
            for entry in entries { try entry.key.withUnsafeBytes { try put($0, entry.live) } }
        }
    }

    /// Writes the `count` entries that `entries` hands to its `put` (entry keys, sorted by their
    /// bytes, each once, with whether it is live) as a new run, then makes the merges that fall
    /// due, all in `tx`.
    static func write(
        count: Int, tx: WriteTransaction, database: Database, state: Database,
        entries: ((_ put: (_ key: UnsafeRawBufferPointer, _ live: Bool) throws -> Void) throws -> Void)
    ) throws {
        guard count > 0 else { return }
        var directory = try IndexRunDirectory.load(tx: tx, state: state)
        if directory.nextRun > IndexRuns.lastRunID {
            // The ids ran out (after about four billion runs): every run is merged into one with
            // id 0, and the ids start over.
            if !directory.runs.isEmpty {
                try merge(0..<directory.runs.count, of: &directory, tx: tx, database: database, as: 0)
            }
            directory.nextRun = 1
        }
        let id = directory.newRun()
        var writer = IndexRunBlock.Writer(run: id)
        try tx.withWriteCursor(on: database) { cursor in
            try entries { entry, live in try writer.add(entry, live: live, cursor: cursor) }
            try writer.flush(cursor: cursor)
        }
        directory.runs.append(IndexRunDirectory.Run(id: id, entries: UInt64(count)))
        while let window = directory.nextMerge() {
            try merge(window, of: &directory, tx: tx, database: database)
        }
        try directory.save(tx: tx, state: state)
    }

    /// The largest id a commit's run takes: the ids above are left for its merges.
    static let lastRunID = UInt32.max - (1 << 16)

    /// Replaces the runs in `window` (adjacent, oldest first) by one new run in their place.
    static func merge(
        _ window: Range<Int>, of directory: inout IndexRunDirectory, tx: WriteTransaction, database: Database,
        as fixedID: UInt32? = nil
    ) throws {
        let inputs = Array(directory.runs[window])
        let output: UInt32
        if let fixedID { output = fixedID } else { output = directory.newRun() }
        // Nothing older can hold a key a tombstone would hide: tombstones of the oldest run go.
        let keepsTombstones = window.lowerBound > 0
        var writer = IndexRunBlock.Writer(run: output, appends: fixedID == nil)
        // The walk decodes each block into memory of its own, so the output's writes leave it
        // valid.
        try IndexRunWalk.withWalk(over: inputs, in: database, tx: tx) { walk in
            try tx.withWriteCursor(on: database) { cursor in
                while try walk.next({ key, live in
                    guard live || keepsTombstones else { return }
                    try writer.add(key, live: live, cursor: cursor)
                }) {}
                try writer.flush(cursor: cursor)
            }
        }
        let written = writer.count
        for run in inputs { try deleteRun(run.id, tx: tx, database: database) }
        directory.runs.replaceSubrange(
            window, with: written > 0 ? [IndexRunDirectory.Run(id: output, entries: written)] : [])
    }

    /// Deletes every key of run `id`.
    private static func deleteRun(_ id: UInt32, tx: WriteTransaction, database: Database) throws {
        let runPrefix = prefix(id)
        try tx.withWriteCursor(on: database) { cursor in
            let first = try cursor.seek(atLeast: runPrefix)
            try cursor.deleteRun(from: first) { $0.key.starts(with: runPrefix) }
        }
    }

    /// Removes every entry of the index whose key prefix is `indexPrefix`, from every run.
    static func drop(indexPrefix: [UInt8], tx: WriteTransaction, database: Database, state: Database) throws {
        var directory = try IndexRunDirectory.load(tx: tx, state: state)
        for (position, run) in directory.runs.enumerated() {
            let start = prefix(run.id) + indexPrefix
            // Blocks hold one index's entries each: the index's blocks go whole.
            var deleted = 0
            try tx.withWriteCursor(on: database) { cursor in
                let first = try cursor.seek(atLeast: start)
                try cursor.deleteRun(from: first) { block in
                    guard block.key.starts(with: start) else { return false }
                    deleted += try IndexRunBlock.entryCount(block.value)
                    return true
                }
            }
            directory.runs[position].entries -= UInt64(min(deleted, Int(directory.runs[position].entries)))
        }
        directory.runs.removeAll { $0.entries == 0 }
        try directory.save(tx: tx, state: state)
    }

    /// Calls `body` with each live entry key of the index whose key prefix is `indexPrefix`, or
    /// of every index (`nil`), in key order, until it returns `false`.
    static func forEachLive(
        indexPrefix: [UInt8]? = nil, tx: ReadTransaction, database: Database, state: Database,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let directory = try IndexRunDirectory.load(tx: tx, state: state)
        try IndexRunWalk.withWalk(
            over: directory.runs, in: database, tx: tx, start: indexPrefix ?? [],
            end: indexPrefix.flatMap(IndexKey.successor(of:))
        ) { walk in try walk.forEachLive(body) }
    }
}
