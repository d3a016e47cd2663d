import LMDB

extension ProjectionWriter {
    /// Builds the declared indexes from the live items, ``indexBatch`` items per transaction,
    /// after a replay that deferred them with the search index (``defersSearch``): after the
    /// last pass's ``indexReplayedItems(_:in:)`` and before ``endDeferredReplay()``.
    ///
    /// Like the search index, an index built once from the final items is what maintaining it
    /// event by event would have left, at a fraction of the writes (an item changed a hundred
    /// times is indexed once).
    func indexItemsAfterReplay(in environment: Environment) throws {
        guard defersSearch, let indexes else { return }
        // The indexes are built from the stored items.
        try stopHoldingRecords(in: environment)
        for collection in indexes.definitions.keys.sorted(by: utf8Less) {
            let definitions = indexes.definitions[collection] ?? []
            var after: [UInt8]?
            repeat {
                after = try environment.write { tx in
                    try IndexWriter.build(
                        definitions, of: collection, after: after, limit: ProjectionWriter.indexBatch,
                        databases: databases, tx: tx)
                }
            } while after != nil
        }
    }
}
