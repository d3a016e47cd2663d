import Dispatch
import LMDB

/// The item records of a replay that defers search (a rebuild, or the scratch build of a verify
/// or a replay), kept decoded in memory instead of being read, decoded, encoded and written
/// back for every event.
///
/// An item that changed a hundred times is then decoded at most once and written once, and a
/// pass of a rebuild (see ``ReplayPasses``) whose items all fit in ``limit`` indexes them
/// straight from memory (``ProjectionWriter/indexReplayedItems(_:in:)``). When more items than
/// that come, the records are written to the store in key order (``flush(in:database:)``) and
/// the pass goes on reading and writing them there, as incremental maintenance does.
///
/// A held record changes in place (``update(_:eventBytes:load:_:)``): its state is not copied
/// for each event, as incremental maintenance copies it to compare the declared indexes and the
/// search document before and after. So changes cannot be undone: a chunk whose transaction runs
/// again (the map grew, or another process resized it) finds records changed by the aborted
/// attempt (``changedSinceCommit``), and the replay starts over (``ReplayRestart``): holding
/// records again once, then without.
final class ReplayRecords {
    /// The records held, by item key.
    private var entries: [ByteKey: ItemRecord] = [:]
    /// Whether a record changed since the last ``commit()``.
    private(set) var changedSinceCommit = false
    /// The most records held (see ``isFull``).
    let limit: Int
    /// The most bytes of events applied to held records (see ``isFull``).
    let byteLimit: Int
    /// The bytes of the events applied to held records: more than the records take once encoded
    /// (an item's every version counts), so it bounds their memory whatever the items' size.
    private(set) var bytes = 0

    init(limit: Int, byteLimit: Int) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    /// The record held for `key`, if any.
    func record(_ key: [UInt8]) -> ItemRecord? {
        entries[ByteKey(key)]
    }

    /// Runs `body` on the record held for `key` (first held as `load` returns it), after an
    /// event of `eventBytes` bytes, and returns what `body` returns.
    func update<T>(
        _ key: [UInt8], eventBytes: Int, load: () throws -> ItemRecord, _ body: (inout ItemRecord) throws -> T
    ) throws -> T {
        bytes += eventBytes
        changedSinceCommit = true
        let key = ByteKey(key)
        if let index = entries.index(forKey: key) { return try body(&entries.values[index]) }
        var record = try load()
        let result = try body(&record)
        entries[key] = record
        return result
    }

    /// Keeps the changes made so far: their transaction committed.
    func commit() {
        changedSinceCommit = false
    }

    /// Whether more than ``limit`` records, or events of more than ``byteLimit`` bytes, are held.
    var isFull: Bool { entries.count > limit || bytes > byteLimit }

    /// The held keys in the store's key order.
    var sortedKeys: [[UInt8]] { entries.keys.sorted().map(\.bytes) }

    /// Lets the records go on another thread: tens of thousands of small allocations, which the
    /// writer need not wait for.
    func releaseInBackground() {
        let released = entries
        entries = [:]
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(released) {} }
    }

    /// Writes every held record to `database` in key order, in one transaction, then lets them go.
    func flush(in environment: Environment, database: Database) throws {
        guard !entries.isEmpty else { return }
        precondition(!changedSinceCommit, "a flush comes between committed chunks")
        let keys = entries.keys.sorted()
        try environment.write { tx in
            for key in keys { try tx.put(entries[key]!.encoded(), forKey: key.bytes, in: database) }
        }
        entries.removeAll()
    }
}

/// Thrown when a chunk of a replay that holds item records in memory runs again after its
/// transaction was aborted: the held records took the aborted attempt's changes, so the replay
/// starts over, holding none (see ``ReplayRecords``).
struct ReplayRestart: Error {}
