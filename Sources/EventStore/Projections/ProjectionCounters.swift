import LMDB

/// Counters the projections update on almost every event — per-collection search statistics,
/// item counts, the next doc id — kept in memory during a transaction and written once, at the
/// checkpoint, instead of a read and a write per event.
///
/// The values are loaded from the generation's databases on first use in a transaction, so the
/// bytes written are the same as if every event had written them.
struct ProjectionCounters {
    var stats: [String: CollectionStats] = [:]
    var counts: [String: Int64] = [:]
    var nextDocID: UInt32?
    /// Search postings to add and remove.
    var postings = PostingBuffer()

    mutating func collectionStats(_ collection: String, tx: ReadTransaction, databases: ProjectionDatabases) throws
        -> CollectionStats
    {
        if let cached = stats[collection] { return cached }
        let loaded = try CollectionStats.load(collection, tx: tx, db: databases.searchStats)
        stats[collection] = loaded
        return loaded
    }

    mutating func adjustCount(_ collection: String, by delta: Int64, tx: ReadTransaction, databases: ProjectionDatabases) throws {
        if counts[collection] == nil {
            counts[collection] = try tx.value(forKey: ProjectionWriter.countKey(collection), in: databases.state)
                .map(Counter.decode) ?? 0
        }
        counts[collection]! += delta
    }

    mutating func allocateDocID(tx: ReadTransaction, databases: ProjectionDatabases) throws -> UInt32 {
        let next = try nextDocID ?? tx.value(forKey: SearchIndexWriter.nextDocKey, in: databases.state).map {
            $0.withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) }
        } ?? 1
        guard next < UInt32.max else { throw EventStoreError(.projection, "search index ran out of document ids") }
        nextDocID = next + 1
        return next
    }

    /// Writes every changed counter and forgets them.
    mutating func flush(tx: WriteTransaction, databases: ProjectionDatabases) throws {
        try postings.flush(tx: tx, database: databases.searchPostings)
        for (collection, value) in stats { try value.save(collection, tx: tx, db: databases.searchStats) }
        for (collection, count) in counts {
            let key = ProjectionWriter.countKey(collection)
            if count == 0 { try tx.delete(key, in: databases.state) } else { try tx.put(Counter.encode(count), forKey: key, in: databases.state) }
        }
        if let nextDocID {
            try tx.put(withUnsafeBytes(of: nextDocID.bigEndian, Array.init), forKey: SearchIndexWriter.nextDocKey, in: databases.state)
        }
        self = ProjectionCounters()
    }
}
