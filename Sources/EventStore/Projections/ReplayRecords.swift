import LMDB

/// The item records of a replay that defers search (a rebuild, or the scratch build of a verify
/// or a replay), kept decoded in memory instead of being read, decoded, encoded and written
/// back for every event.
///
/// An item that changed a hundred times is then decoded at most once and written once, and a
/// rebuild whose items all fit in ``limit`` indexes them straight from memory
/// (``ProjectionWriter/indexLiveItems(in:)``). When more items than that come, the records are
/// written to the store in key order (``flush(in:database:)``) and the replay goes on reading
/// and writing them there, as incremental maintenance does.
///
/// A chunk's transaction can run again (a full map grows and the write is retried), so changes
/// are undone to the last ``commit()`` by ``rollBack()``, which the start of every chunk calls.
final class ReplayRecords {
    private struct Entry {
        var record: ItemRecord
        /// The chunk that last changed it (its old value is then in ``undo``).
        var chunk: UInt64
    }

    /// The records held, by item key.
    private var entries: [ByteKey: Entry] = [:]
    /// The records changed by the current chunk, as they were before it (`nil`: not held).
    private var undo: [(key: ByteKey, before: ItemRecord?)] = []
    /// The current chunk (``commit()`` starts the next).
    private var chunk: UInt64 = 1
    /// The most records held (see ``isFull``).
    let limit: Int
    /// The most bytes of events applied to held records (see ``isFull``).
    let byteLimit: Int
    /// The bytes of the events applied to held records: more than the records take once encoded
    /// (an item's every version counts, and so does a retried chunk's), so it bounds their memory
    /// whatever the items' size.
    private(set) var bytes = 0

    init(limit: Int, byteLimit: Int) {
        self.limit = limit
        self.byteLimit = byteLimit
    }

    /// The record held for `key`, if any.
    func record(_ key: [UInt8]) -> ItemRecord? {
        entries[ByteKey(key)]?.record
    }

    /// Holds `record` as the item's current one, after an event of `eventBytes` bytes.
    func set(_ record: ItemRecord, for key: [UInt8], eventBytes: Int) {
        bytes += eventBytes
        let key = ByteKey(key)
        guard let index = entries.index(forKey: key) else {
            undo.append((key, nil))
            entries[key] = Entry(record: record, chunk: chunk)
            return
        }
        if entries.values[index].chunk != chunk {
            undo.append((key, entries.values[index].record))
            entries.values[index].chunk = chunk
        }
        entries.values[index].record = record
    }

    /// Undoes every change since the last ``commit()`` (the transaction that made them was
    /// aborted).
    func rollBack() {
        for (key, before) in undo {
            entries[key] = before.map { Entry(record: $0, chunk: chunk - 1) }
        }
        undo.removeAll(keepingCapacity: true)
    }

    /// Keeps the changes made so far: their transaction committed.
    func commit() {
        undo.removeAll(keepingCapacity: true)
        chunk += 1
    }

    /// Whether more than ``limit`` records, or events of more than ``byteLimit`` bytes, are held.
    var isFull: Bool { entries.count > limit || bytes > byteLimit }

    /// The held keys in the store's key order.
    var sortedKeys: [[UInt8]] { entries.keys.sorted().map(\.bytes) }

    /// Writes every held record to `database` in key order, in one transaction, then lets them go.
    func flush(in environment: Environment, database: Database) throws {
        guard !entries.isEmpty else { return }
        precondition(undo.isEmpty, "a flush comes between committed chunks")
        let keys = entries.keys.sorted()
        try environment.write { tx in
            for key in keys { try tx.put(entries[key]!.record.encoded(), forKey: key.bytes, in: database) }
        }
        entries.removeAll()
    }
}
