import LMDB

/// Search indexing for a rebuild from the log: while events are replayed, only which items hold
/// a doc id is tracked (ids are allocated exactly when incremental maintenance would allocate
/// them); each item that exists at the end is then tokenized and indexed once, in doc-id order.
///
/// The result is the same set of entries incremental maintenance produces (postings, documents,
/// doc ids, statistics, the next doc id), at a fraction of the cost: an item edited a hundred
/// times is tokenized once, and postings are written in order instead of added and removed.
///
/// Replay transactions can be retried (after the map grows): each one runs between
/// ``rollBack()`` (undo what a failed attempt did) and ``commit()`` (after it committed).
final class DeferredIndex {
    struct Entry: Equatable {
        var docID: UInt32
        var collection: String
    }

    /// The items that hold a doc id, by item key.
    private(set) var documents: [[UInt8]: Entry] = [:]
    /// What the current transaction changed, to undo it: the key and its previous entry.
    private var journal: [([UInt8], Entry?)] = []

    /// Records the change of one item from `before` to `after`, allocating or releasing its doc
    /// id as ``SearchIndexWriter/update(collection:itemKey:before:after:tx:databases:counters:)``
    /// would.
    func note(
        collection: String, itemKey: [UInt8], after: ItemState, indexable: Bool, tx: WriteTransaction,
        databases: ProjectionDatabases, counters: inout ProjectionCounters
    ) throws {
        let current = documents[itemKey]
        if current != nil && !(after.exists && indexable) {
            journal.append((itemKey, current))
            documents[itemKey] = nil
        } else if current == nil && after.exists && indexable {
            journal.append((itemKey, nil))
            documents[itemKey] = Entry(docID: try counters.allocateDocID(tx: tx, databases: databases), collection: collection)
        }
    }

    /// Undoes what an uncommitted transaction recorded.
    func rollBack() {
        for (key, previous) in journal.reversed() { documents[key] = previous }
        journal.removeAll(keepingCapacity: true)
    }

    /// Keeps what the committed transaction recorded.
    func commit() {
        journal.removeAll(keepingCapacity: true)
    }
}

extension ProjectionWriter {
    /// Documents indexed per transaction when a deferred index is finished.
    static let deferredBatch = 20_000

    /// Indexes every item the deferred index holds, in doc-id order, in transactions of
    /// ``deferredBatch`` documents; then stops deferring.
    func finishDeferredIndex(in environment: Environment) throws {
        guard let deferred = deferredIndex else { return }
        deferredIndex = nil
        let entries = deferred.documents.sorted { $0.value.docID < $1.value.docID }
        var start = 0
        while start < entries.count {
            let batch = entries[start..<min(entries.count, start + ProjectionWriter.deferredBatch)]
            try environment.write { tx in
                counters = ProjectionCounters()
                for (itemKey, entry) in batch {
                    let state = try itemKey.withUnsafeBytes { key in
                        try tx.value(forKey: key, in: databases.items).map { try ItemState(decoding: $0) }
                    }
                    guard let state, let document = search.document(collection: entry.collection, state: state) else {
                        throw EventStoreError(.projection, "deferred index: item \(entry.collection) lost its state")
                    }
                    try search.index(
                        document, docID: entry.docID, collection: entry.collection, itemKey: itemKey, tx: tx,
                        databases: databases, counters: &counters)
                    try tx.put(itemKey, forKey: StoredDocument.docIDKey(entry.docID), in: databases.searchDocIDs)
                }
                try counters.flush(tx: tx, databases: databases)
            }
            start += batch.count
        }
    }
}
