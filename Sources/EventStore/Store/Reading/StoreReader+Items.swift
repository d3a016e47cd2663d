import LMDB

extension StoreReader {
    /// The item, or `nil` when it does not exist (never written, or deleted).
    public func item(_ collection: String, _ id: String) throws -> Item? {
        try itemValues(collection, id)?.item(collection: collection, id: id)
    }

    /// The values of an item, deleted or not, decoded without what only merging needs.
    func itemValues(_ collection: String, _ id: String) throws -> ItemValues? {
        try withItemRecord(prefix: Keys.collectionPrefix(collection), id) { try ItemValues(decodingRecord: $0) }
    }

    /// Calls `body` with the record of item `id` of the collection whose key prefix
    /// (``Keys/collectionPrefix(_:)``) is `prefix`, in place; `nil` when the collection has no
    /// record for it. Readers of many items make the prefix once; the key is composed on the
    /// stack.
    func withItemRecord<T>(prefix: [UInt8], _ id: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        var id = id
        let items = try projection.items
        return try id.withUTF8 { id in
            try withUnsafeTemporaryAllocation(byteCount: prefix.count + id.count, alignment: 1) { key in
                prefix.withUnsafeBytes { key.copyMemory(from: $0) }
                UnsafeMutableRawBufferPointer(rebasing: key[prefix.count...]).copyMemory(
                    from: UnsafeRawBufferPointer(id))
                return try tx.value(forKey: UnsafeRawBufferPointer(key), in: items).map(body)
            }
        }
    }

    /// A page of a collection's items in stable id order, after the cursor `after`.
    ///
    /// ```swift
    /// var page = try reader.items(in: "notes", limit: 100)
    /// while let next = page.next { page = try reader.items(in: "notes", after: next, limit: 100) }
    /// ```
    public func items(in collection: String, after cursor: String? = nil, limit: Int = 100) throws -> ItemPage {
        var items: [Item] = []
        var more = false
        var template = FieldsTemplate()
        try forEachItemRecord(in: collection, after: cursor) { id, value in
            let record = try ItemRecordView(value)
            guard record.exists else { return true }
            if items.count == limit {
                more = true
                return false
            }
            items.append(try record.item(collection: collection, id: id, template: &template))
            return true
        }
        return ItemPage(items: items, next: more ? items.last?.id : nil)
    }

    /// Calls `body` with each item record of a collection (deleted ones included) in id order.
    func forEachItemRecord(
        in collection: String, after cursor: String? = nil, _ body: (String, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let prefix = Keys.collectionPrefix(collection)
        var start = prefix
        if let cursor {
            start.append(contentsOf: cursor.utf8)
            start.append(0)  // the smallest key after the cursor's own
        }
        try ItemRecord.forEach(in: try projection.items, tx: tx, from: start) { key, value in
            guard key.starts(with: prefix) else { return false }
            let (_, id) = try Keys.splitItem(key)
            return try body(id, value)
        }
    }

    /// The number of existing items in a collection.
    public func count(in collection: String) throws -> Int {
        try tx.value(forKey: ProjectionWriter.countKey(collection), in: try projection.state)
            .map { Int(Counter.decode($0)) } ?? 0
    }

    /// The names of the collections that hold or held items.
    public func collections() throws -> [String] {
        var names: [String] = []
        try tx.withCursor(on: try projection.items) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                let (collection, _) = try Keys.splitItem(current.key)
                names.append(collection)
                entry = try cursor.seek(atLeast: Keys.collectionPrefix(collection).dropLast() + [1])
            }
        }
        return names
    }

    /// Conflict records, optionally for one collection or one item, in key order.
    public func conflicts(collection: String? = nil, item: String? = nil, limit: Int = .max) throws -> [ConflictRecord]
    {
        var prefix: [UInt8] = []
        if let collection {
            prefix = Keys.collectionPrefix(collection)
            if let item { prefix = Keys.item(collection, item) + [0] }
        }
        var records: [ConflictRecord] = []
        try prefix.withUnsafeBytes { start in
            try tx.forEach(in: try projection.conflicts, from: prefix.isEmpty ? nil : start) { key, value in
                guard key.starts(with: prefix), records.count < limit else { return false }
                records.append(try ConflictRecord(key: key, value: value))
                return true
            }
        }
        return records
    }

    /// A value from a custom projection's database.
    public func projectionValue(forKey key: [UInt8], projection name: String, database: String) throws -> [UInt8]? {
        guard let db = try projection.custom["\(name).\(database)"] else {
            throw EventStoreError(.projection, "no projection database \(name).\(database)")
        }
        return try tx.value(forKey: key, in: db)
    }

    /// Every entry of a custom projection's database, in key order.
    public func projectionEntries(projection name: String, database: String) throws -> [(key: [UInt8], value: [UInt8])]
    {
        guard let db = try projection.custom["\(name).\(database)"] else {
            throw EventStoreError(.projection, "no projection database \(name).\(database)")
        }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        try tx.forEach(in: db) { key, value in
            entries.append((Array(key), Array(value)))
            return true
        }
        return entries
    }
}
