import LMDB

extension ProjectionWriter {
    /// Documents indexed per transaction when a rebuild indexes the live items.
    static let indexBatch = 20_000

    /// Indexes every item that has searchable content, in item-key order, ``indexBatch``
    /// documents per transaction, and records each item's doc id in its ``ItemRecord``; then
    /// stops deferring.
    ///
    /// A rebuild replays the log with search indexing deferred (``defersSearch``), then calls
    /// this: each live item is tokenized once, however often it changed, and the index is written
    /// in a few large segments that later commits merge.
    func indexLiveItems(in environment: Environment) throws {
        guard defersSearch else { return }
        defersSearch = false
        var resumeAfter: [UInt8]?
        while true {
            let last = try environment.write { tx -> [UInt8]? in
                counters = ProjectionCounters()
                var indexed: [(key: [UInt8], record: ItemRecord)] = []
                var last: [UInt8]?
                let start = resumeAfter.map { $0 + [0] } ?? []
                try ItemRecord.forEach(in: databases.items, tx: tx, from: start) { key, value in
                    guard indexed.count < ProjectionWriter.indexBatch else { return false }
                    let (collection, _) = try Keys.splitItem(key)
                    var record = try ItemRecord(decoding: value)
                    let itemKey = Array(key)
                    if let document = counters.search.document(of: record.state, collection: collection, writer: search)
                    {
                        record.searchDocument = try counters.search.add(
                            document, itemKey: itemKey, collection: collection, tx: tx, databases: databases)
                        indexed.append((itemKey, record))
                    }
                    last = itemKey
                    return true
                }
                // Written after the walk, so that no put moves the pages under its cursor.
                for (key, record) in indexed { try tx.put(record.encoded(), forKey: key, in: databases.items) }
                try counters.flush(tx: tx, databases: databases)
                return last
            }
            guard let last else { return }
            resumeAfter = last
        }
    }
}
