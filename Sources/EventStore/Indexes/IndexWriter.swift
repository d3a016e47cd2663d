import LMDB

/// Maintains the declared indexes of one projection generation (database `g<N>.indexes`): one
/// entry per index and existing item, keyed by ``IndexKey``, with an empty value.
///
/// An append costs, per index of the event's collection, two key encodings (before and after)
/// and, only when the indexed values changed or the item appeared or went away, one delete and
/// one put in the same transaction.
struct IndexWriter {
    let database: Database
    /// The declared indexes by collection.
    let byCollection: [String: [IndexDefinition]]

    init?(definitions: [IndexDefinition], database: Database?) {
        guard let database, !definitions.isEmpty else { return nil }
        self.database = database
        self.byCollection = Dictionary(grouping: definitions, by: \.collection)
    }

    /// The key of `item`'s entry in `index`.
    static func key(_ index: IndexDefinition, id: String, fields: [String: Value]) -> [UInt8] {
        var key = index.keyPrefix
        key.reserveCapacity(64)
        let capacity = IndexKey.componentCapacity(fieldCount: index.fields.count)
        for field in index.fields {
            IndexKey.append(fields[field], capacity: capacity, to: &key)
        }
        key.append(contentsOf: id.utf8)
        return key
    }

    /// Moves the item's entries from its state `before` to its state `after`.
    func update(collection: String, id: String, before: ItemState, after: ItemState, tx: WriteTransaction) throws {
        guard let indexes = byCollection[collection] else { return }
        let beforeFields = before.exists ? before.values : nil
        let afterFields = after.exists ? after.values : nil
        for index in indexes {
            let old = beforeFields.map { IndexWriter.key(index, id: id, fields: $0) }
            let new = afterFields.map { IndexWriter.key(index, id: id, fields: $0) }
            guard old != new else { continue }
            if let old { _ = try tx.delete(old, in: database) }
            if let new { try tx.put([], forKey: new, in: database) }
        }
    }

    /// Adds the entries of `indexes` for every existing item of their collections, read from
    /// `items` (a new index on an existing store), in `tx`.
    static func build(
        _ indexes: [IndexDefinition], from items: Database, into database: Database, tx: WriteTransaction
    ) throws {
        for (collection, definitions) in Dictionary(grouping: indexes, by: \.collection) {
            _ = try build(definitions, of: collection, after: nil, limit: .max, from: items, into: database, tx: tx)
        }
    }

    /// Adds the entries of `definitions` (all of `collection`) for up to `limit` items of the
    /// collection whose keys follow `after` (`nil`: from the first).
    ///
    /// - Returns: The key of the last item read, or `nil` when none was left.
    static func build(
        _ definitions: [IndexDefinition], of collection: String, after: [UInt8]?, limit: Int, from items: Database,
        into database: Database, tx: WriteTransaction
    ) throws -> [UInt8]? {
        let prefix = Keys.collectionPrefix(collection)
        let start = after.map { $0 + [0] } ?? prefix  // the smallest key after `after`
        var entries: [[UInt8]] = []
        var last: [UInt8]?
        var read = 0
        try ItemRecord.forEach(in: items, tx: tx, from: start) { key, value in
            guard read < limit, key.starts(with: prefix) else { return false }
            read += 1
            last = Array(key)
            let state = try ItemRecord(decoding: value).state
            guard state.exists else { return true }
            let (_, id) = try Keys.splitItem(key)
            let fields = state.values
            for index in definitions { entries.append(IndexWriter.key(index, id: id, fields: fields)) }
            return true
        }
        for entry in entries { try tx.put([], forKey: entry, in: database) }
        return last
    }

    /// Removes every entry of `index`.
    static func drop(_ index: IndexDefinition, from database: Database, tx: WriteTransaction) throws {
        let prefix = index.keyPrefix
        var keys: [[UInt8]] = []
        try prefix.withUnsafeBytes { start in
            try tx.forEach(in: database, from: start) { key, _ in
                guard key.starts(with: prefix) else { return false }
                keys.append(Array(key))
                return true
            }
        }
        for key in keys { _ = try tx.delete(key, in: database) }
    }
}
