import LMDB

/// What the projections change on almost every event — item counts per collection, the search
/// index and the declared indexes — kept in memory during a transaction and written once, at the checkpoint,
/// instead of a read and a write per event.
///
/// Counts are loaded from the generation's databases on first use in a transaction, so the
/// bytes written are the same as if every event had written them.
struct ProjectionCounters {
    var counts: [String: Int64] = [:]
    /// The search index's changes (new documents, dead ones, statistics).
    var search = SearchIndexChanges()
    /// The declared indexes' changes (written as one run).
    var indexes = IndexChanges()

    mutating func adjustCount(
        _ collection: String, by delta: Int64, tx: ReadTransaction, databases: ProjectionDatabases
    ) throws {
        if counts[collection] == nil {
            counts[collection] =
                try tx.value(forKey: ProjectionWriter.countKey(collection), in: databases.state)
                .map(Counter.decode) ?? 0
        }
        counts[collection]! += delta
    }

    /// Writes every change and forgets them.
    mutating func flush(tx: WriteTransaction, databases: ProjectionDatabases, mergeAhead: MergeAhead? = nil) throws {
        try search.flush(tx: tx, databases: databases, ahead: mergeAhead)
        try indexes.flush(tx: tx, databases: databases)
        for (collection, count) in counts {
            let key = ProjectionWriter.countKey(collection)
            if count == 0 {
                try tx.delete(key, in: databases.state)
            } else {
                try tx.put(Counter.encode(count), forKey: key, in: databases.state)
            }
        }
        self = ProjectionCounters()
    }
}
