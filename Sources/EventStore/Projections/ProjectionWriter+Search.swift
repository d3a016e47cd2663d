import LMDB

extension ProjectionWriter {
    /// Documents indexed per transaction when a rebuild indexes the live items.
    static let indexBatch = 20_000

    /// Indexes every item in `range` that has searchable content, in item-key order,
    /// ``indexBatch`` documents per transaction, and records each item's doc id in its
    /// ``ItemRecord``: the items of one pass of a replay that defers search (each pass calls it
    /// for its range, see ``ReplayPasses``), the held records (then written once, and let go)
    /// or those the pass wrote. Deferral goes on until ``endDeferredReplay()``.
    ///
    /// A rebuild replays the log with search indexing deferred (``defersSearch``), then calls
    /// this: each live item is tokenized once, however often it changed, and the index is written
    /// in a few large segments that later commits merge.
    func indexReplayedItems(_ range: ItemKeyRange = .all, in environment: Environment) throws {
        guard defersSearch else { return }
        if let replayRecords {
            try indexHeldItems(replayRecords, in: environment)
            releaseReplayRecords()
            return
        }
        var start = range.lower ?? []
        while true {
            let last = try environment.write { tx -> [UInt8]? in
                counters = ProjectionCounters()
                var indexed: [(key: [UInt8], record: ItemRecord)] = []
                var last: [UInt8]?
                try ItemRecord.forEach(in: databases.items, tx: tx, from: start) { key, value in
                    guard indexed.count < ProjectionWriter.indexBatch, range.contains(key) else { return false }
                    var record = try ItemRecord(decoding: value)
                    let itemKey = Array(key)
                    if try index(&record, itemKey: itemKey, tx: tx) { indexed.append((itemKey, record)) }
                    last = itemKey
                    return true
                }
                // Written after the walk, so that no put moves the pages under its cursor.
                for (key, record) in indexed { try tx.put(record.encoded(), forKey: key, in: databases.items) }
                try counters.flush(tx: tx, databases: databases)
                return last
            }
            guard let last else { return }
            start = last + [0]
        }
    }

    /// ``indexReplayedItems(_:in:)`` for a pass that held its items in memory: each record is
    /// indexed and written once, in key order, ``indexBatch`` per transaction.
    private func indexHeldItems(_ held: ReplayRecords, in environment: Environment) throws {
        let keys = held.sortedKeys
        for start in stride(from: 0, to: keys.count, by: ProjectionWriter.indexBatch) {
            let batch = keys[start..<min(start + ProjectionWriter.indexBatch, keys.count)]
            try environment.write { tx in
                counters = ProjectionCounters()
                for itemKey in batch {
                    var record = held.record(itemKey)!
                    try index(&record, itemKey: itemKey, tx: tx)
                    try tx.put(record.encoded(), forKey: itemKey, in: databases.items)
                }
                try counters.flush(tx: tx, databases: databases)
            }
        }
    }

    /// Adds the search document of the item's state, if it has searchable content, to the
    /// transaction's segment and records its doc id in `record`; returns whether it had one.
    @discardableResult
    private func index(_ record: inout ItemRecord, itemKey: [UInt8], tx: WriteTransaction) throws -> Bool {
        let (collection, _) = try itemKey.withUnsafeBytes { try Keys.splitItem($0) }
        guard let text = search.text(collection: collection, state: record.state) else { return false }
        record.searchDocument = try counters.search.add(
            text, writer: search, itemKey: itemKey, collection: collection, tx: tx, databases: databases)
        return true
    }
}
