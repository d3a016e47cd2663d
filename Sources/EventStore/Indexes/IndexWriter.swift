import LMDB

/// Maintains the declared indexes of one projection generation (database `g<N>.indexes`, stored
/// as sorted runs: see ``IndexRuns``): one live entry per index and existing item, keyed by
/// ``IndexKey``.
///
/// An append costs, per index of the event's collection, two key encodings (before and after)
/// and, only when the indexed values changed or the item appeared or went away, a tombstone for
/// the old entry and the new entry in the transaction's ``IndexChanges``, written at the
/// checkpoint as one run.
struct IndexWriter {
    /// What writing an index's keys needs, computed once.
    struct Prepared {
        let prefix: [UInt8]
        let fields: [String]
        let capacity: Int

        init(_ index: IndexDefinition) {
            prefix = index.keyPrefix
            fields = index.fields
            capacity = IndexKey.componentCapacity(fieldCount: index.fields.count)
        }

        /// Appends the key of item `id`'s entry, whose field values `value` gives, to `key`.
        func appendKey(id: String, to key: inout [UInt8], value: (String) -> Value?) {
            key.append(contentsOf: prefix)
            for field in fields { IndexKey.append(value(field), capacity: capacity, to: &key) }
            key.append(contentsOf: id.utf8)
        }
    }

    /// The declared indexes by collection.
    let definitions: [String: [IndexDefinition]]
    /// The same, prepared for writing keys.
    private let byCollection: [String: [Prepared]]

    init?(definitions: [IndexDefinition], database: Database?) {
        guard database != nil, !definitions.isEmpty else { return nil }
        self.definitions = Dictionary(grouping: definitions, by: \.collection)
        self.byCollection = self.definitions.mapValues { $0.map(Prepared.init) }
    }

    /// The key of `item`'s entry in `index`.
    static func key(_ index: IndexDefinition, id: String, fields: [String: Value]) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(64)
        Prepared(index).appendKey(id: id, to: &key) { fields[$0] }
        return key
    }

    /// Records the move of the item's entries from its state `before` to its state `after`.
    func update(collection: String, id: String, before: ItemState, after: ItemState, changes: inout IndexChanges) {
        guard let indexes = byCollection[collection] else { return }
        for index in indexes {
            // A non-escaping closure: neither state is copied into a context.
            changes.move(old: before.exists, new: after.exists) { new, key in
                if new {
                    index.appendKey(id: id, to: &key) { after.value(of: $0) }
                } else {
                    index.appendKey(id: id, to: &key) { before.value(of: $0) }
                }
            }
        }
    }

    /// Adds the entries of `indexes` for every existing item of their collections, read from
    /// `items` (a new index on an existing store), in `tx`.
    static func build(_ indexes: [IndexDefinition], databases: ProjectionDatabases, tx: WriteTransaction) throws {
        for (collection, definitions) in Dictionary(grouping: indexes, by: \.collection) {
            _ = try build(definitions, of: collection, after: nil, limit: .max, databases: databases, tx: tx)
        }
    }

    /// Adds the entries of `definitions` (all of `collection`) for up to `limit` items of the
    /// collection whose keys follow `after` (`nil`: from the first).
    ///
    /// - Returns: The key of the last item read, or `nil` when none was left.
    static func build(
        _ definitions: [IndexDefinition], of collection: String, after: [UInt8]?, limit: Int,
        databases: ProjectionDatabases, tx: WriteTransaction
    ) throws -> [UInt8]? {
        let prefix = Keys.collectionPrefix(collection)
        let start = after.map { $0 + [0] } ?? prefix  // the smallest key after `after`
        var changes = IndexChanges()
        var last: [UInt8]?
        var read = 0
        try ItemRecord.forEach(in: databases.items, tx: tx, from: start) { key, value in
            guard read < limit, key.starts(with: prefix) else { return false }
            read += 1
            last = Array(key)
            let state = try ItemRecord(decoding: value).state
            guard state.exists else { return true }
            let (_, id) = try Keys.splitItem(key)
            let fields = state.values
            for index in definitions { changes.insert(IndexWriter.key(index, id: id, fields: fields)) }
            return true
        }
        try changes.flush(tx: tx, databases: databases)
        return last
    }

    /// Removes every entry of `index`.
    static func drop(_ index: IndexDefinition, databases: ProjectionDatabases, tx: WriteTransaction) throws {
        guard let database = databases.indexes else { return }
        try IndexRuns.drop(indexPrefix: index.keyPrefix, tx: tx, database: database, state: databases.state)
    }
}
