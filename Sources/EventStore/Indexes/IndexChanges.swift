import LMDB

/// The declared indexes' changes of one transaction, kept in memory and written at the
/// checkpoint as one run (``IndexRuns``): a key's last change wins.
///
/// Keys are appended to one buffer and sorted at the flush by their bytes: recording a change
/// allocates nothing and hashes nothing.
struct IndexChanges {
    private struct Change {
        var start: Int
        var end: Int
        var live: Bool
    }

    private var bytes: [UInt8] = []
    private var changes: [Change] = []

    var isEmpty: Bool { changes.isEmpty }

    /// Records that the entry whose key `appendKey(false, &bytes)` appends is deleted (when
    /// `old`) and the one whose key `appendKey(true, &bytes)` appends exists (when `new`);
    /// nothing when both keys are equal.
    mutating func move(old: Bool, new: Bool, appendKey: (_ new: Bool, _ bytes: inout [UInt8]) -> Void) {
        let mark = bytes.count
        if old {
            appendKey(false, &bytes)
            changes.append(Change(start: mark, end: bytes.count, live: false))
        }
        let middle = bytes.count
        if new {
            appendKey(true, &bytes)
            changes.append(Change(start: middle, end: bytes.count, live: true))
        }
        if old, new, bytes[mark..<middle].elementsEqual(bytes[middle...]) {
            changes.removeLast(2)
            bytes.removeSubrange(mark...)
        }
    }

    /// Records that the entry `key` exists.
    mutating func insert(_ key: [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: key)
        changes.append(Change(start: start, end: bytes.count, live: true))
    }

    /// Writes the changes as a new run (and the merges that fall due), and forgets them.
    mutating func flush(tx: WriteTransaction, databases: ProjectionDatabases) throws {
        guard !changes.isEmpty, let database = databases.indexes else { return }
        defer {
            bytes.removeAll(keepingCapacity: true)
            changes.removeAll(keepingCapacity: true)
        }
        try bytes.withUnsafeBytes { buffer in
            func key(_ change: Change) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: buffer[change.start..<change.end])
            }
            // By key, then in the order recorded: the last of equal keys wins. The keys of a
            // commit share their first bytes (an index's id, often its first values): the 8
            // bytes after what all share decide most comparisons as one integer compare.
            let first = key(changes[0])
            var shared = first.count
            for change in changes.dropFirst() where shared > 0 {
                shared = min(shared, commonPrefixCount(first, key(change)))
            }
            var order = changes.indices.map { (prefix: bigEndianPrefix(key(changes[$0]), from: shared), position: $0) }
            order.sort {
                guard $0.prefix == $1.prefix else { return $0.prefix < $1.prefix }
                let byKey = compareBytes(key(changes[$0.position]), key(changes[$1.position]))
                return byKey != 0 ? byKey < 0 : $0.position < $1.position
            }
            var kept: [Change] = []
            kept.reserveCapacity(order.count)
            for (_, position) in order {
                let change = changes[position]
                if let last = kept.last, compareBytes(key(last), key(change)) == 0 {
                    kept[kept.count - 1] = change
                } else {
                    kept.append(change)
                }
            }
            try IndexRuns.write(count: kept.count, tx: tx, database: database, state: databases.state) { put in
                for change in kept { try put(key(change), change.live) }
            }
        }
    }
}
