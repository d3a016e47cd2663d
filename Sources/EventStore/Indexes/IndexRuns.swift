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
/// tombstones. `fanIn` runs of one size tier are merged at a time, so an entry is rewritten about
/// once per tier (log base 8 of the index's size). A merge within the commit's budget
/// (``budget(forEntries:)``) runs whole inside the commit that makes it due; a larger one is
/// copied over the following commits, a budget at a time, while queries go on reading its
/// inputs (``IndexRunDirectory/Merge``). Reading, writing and deleting go a block at a time.
enum IndexRuns {
    /// Bytes of a key's run prefix.
    static let prefixBytes = 4

    /// The key prefix of run `id`.
    static func prefix(_ id: UInt32) -> [UInt8] { withUnsafeBytes(of: id.bigEndian, Array.init) }

    /// Writes `entries` (entry keys, sorted by their bytes, each once, with whether it is live)
    /// as a new run, then makes the merges that fall due, all in `tx`.
    static func write(
        _ entries: [(key: [UInt8], live: Bool)], tx: WriteTransaction, database: Database, state: Database,
        budget: UInt64? = nil
    ) throws {
        try write(count: entries.count, tx: tx, database: database, state: state, budget: budget) { put in
            for entry in entries { try entry.key.withUnsafeBytes { try put($0, entry.live) } }
        }
    }

    /// Writes the `count` entries that `entries` hands to its `put` (entry keys, sorted by their
    /// bytes, each once, with whether it is live) as a new run, then makes the merges that fall
    /// due, all in `tx`.
    ///
    /// - Parameter budget: The entries the commit's merges may copy (`nil`: ``budget(forEntries:)``).
    static func write(
        count: Int, tx: WriteTransaction, database: Database, state: Database, budget: UInt64? = nil,
        entries: ((_ put: (_ key: UnsafeRawBufferPointer, _ live: Bool) throws -> Void) throws -> Void)
    ) throws {
        guard count > 0 else { return }
        var directory = try IndexRunDirectory.load(tx: tx, state: state)
        if directory.nextRun > IndexRuns.lastRunID {
            // The ids ran out (after about four billion runs): every run is merged into one with
            // id 0, and the ids start over.
            try cancelMerge(of: &directory, tx: tx, database: database)
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
        var budget = budget ?? IndexRuns.budget(forEntries: count)
        // Merges within the budget run whole, so that small runs never pile up behind a large
        // merge; the first larger one is spread over this commit and the following ones.
        while let window = directory.nextMerge() {
            let size = directory.runs[window].reduce(UInt64(0)) { $0 &+ $1.entries }
            if size <= budget {
                try merge(window, of: &directory, tx: tx, database: database)
            } else if directory.merge == nil {
                directory.merge = IndexRunDirectory.Merge(
                    inputs: directory.runs[window].map(\.id), output: directory.newRun())
            } else {
                break
            }
        }
        try continueMerge(of: &directory, budget: &budget, tx: tx, database: database)
        try directory.save(tx: tx, state: state)
    }

    /// The entries a commit that writes `count` index entries may copy in merges: sixteen times
    /// its own, and at least 32,768. Merges up to that size run whole in the commit that makes
    /// them due; a larger one copies that many entries a commit. An index that grows by `n`
    /// entries a commit copies about `2n` a commit in merges at 200k entries (about once per
    /// tier), so the budget keeps up with the merges that fall due while bounding what one commit
    /// spends on them.
    static func budget(forEntries count: Int) -> UInt64 {
        max(32_768, 16 * UInt64(count))
    }

    /// Copies up to `budget` entries of the merge under way into its output, and completes it
    /// when its inputs are exhausted.
    private static func continueMerge(
        of directory: inout IndexRunDirectory, budget: inout UInt64, tx: WriteTransaction, database: Database
    ) throws {
        guard var merge = directory.merge, budget > 0 else { return }
        let done = try copy(&merge, of: &directory, budget: &budget, appends: false, tx: tx, database: database)
        directory.merge = done ? nil : merge
    }

    /// Copies the next keys of `merge`'s inputs into its output, up to `budget` of them, and
    /// completes the merge when the inputs are exhausted: the output takes their place among the
    /// runs and they are deleted.
    ///
    /// - Parameter appends: Whether the output's keys sort after every key of the database.
    /// - Returns: Whether the merge is complete.
    private static func copy(
        _ merge: inout IndexRunDirectory.Merge, of directory: inout IndexRunDirectory, budget: inout UInt64,
        appends: Bool, tx: WriteTransaction, database: Database
    ) throws -> Bool {
        guard let first = directory.runs.firstIndex(where: { $0.id == merge.inputs[0] }) else {
            throw EventStoreError(.corrupt, "the index merge under way reads runs the index directory does not hold")
        }
        let window = first..<(first + merge.inputs.count)
        let inputs = Array(directory.runs[window])
        // Nothing older can hold a key a tombstone would hide: tombstones of the oldest run go.
        let keepsTombstones = first > 0
        // The smallest key after the last one copied.
        let start = merge.resumeAfter.map { $0 + [0] } ?? []
        var writer = IndexRunBlock.Writer(run: merge.output, appends: appends)
        var copied: UInt64 = 0
        var last: [UInt8]?
        // The walk decodes each block into memory of its own, so the output's writes leave it valid.
        let exhausted = try IndexRunWalk.withWalk(over: inputs, in: database, tx: tx, start: start) { walk in
            try tx.withWriteCursor(on: database) { cursor in
                var more = true
                while copied < budget, more {
                    more = try walk.next { key, live in
                        copied += 1
                        // Only the step's last key is where the next step resumes.
                        if copied == budget { last = Array(key) }
                        guard live || keepsTombstones else { return }
                        try writer.add(key, live: live, cursor: cursor)
                    }
                }
                try writer.flush(cursor: cursor)
                return !more
            }
        }
        budget -= min(budget, copied)
        merge.written += writer.count
        guard exhausted else {
            if let last { merge.resumeAfter = last }
            return false
        }
        for run in inputs { try deleteRun(run.id, tx: tx, database: database) }
        directory.runs.replaceSubrange(
            window, with: merge.written > 0 ? [IndexRunDirectory.Run(id: merge.output, entries: merge.written)] : [])
        return true
    }

    /// Abandons the merge under way, if any: its output is deleted, its inputs stay.
    static func cancelMerge(of directory: inout IndexRunDirectory, tx: WriteTransaction, database: Database) throws {
        guard let merge = directory.merge else { return }
        try deleteRun(merge.output, tx: tx, database: database)
        directory.merge = nil
    }

    /// The largest id a commit's run takes: the ids above are left for its merges.
    static let lastRunID = UInt32.max - (1 << 16)

    /// Replaces the runs in `window` (adjacent, oldest first) by one new run in their place, in
    /// this commit.
    static func merge(
        _ window: Range<Int>, of directory: inout IndexRunDirectory, tx: WriteTransaction, database: Database,
        as fixedID: UInt32? = nil
    ) throws {
        var merge = IndexRunDirectory.Merge(
            inputs: directory.runs[window].map(\.id), output: fixedID ?? directory.newRun())
        var unlimited = UInt64.max
        // A fixed id (0) sorts below the inputs: its keys are not appended.
        _ = try copy(&merge, of: &directory, budget: &unlimited, appends: fixedID == nil, tx: tx, database: database)
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
        // A later commit starts the merge again, without the dropped index's entries.
        try cancelMerge(of: &directory, tx: tx, database: database)
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
}
