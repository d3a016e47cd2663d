import LMDB

/// Raw views for inspection tools (`evstore dump --terms`, `--meta`): search terms, every
/// metadata entry, and the active generation's projection state (checkpoints and counters).
extension StoreReader {
    /// Calls `body` with each search term of a collection (tags start with `#`), in byte order,
    /// and the number of items it occurs in, until `body` returns `false`.
    ///
    /// ```swift
    /// try store.read { reader in
    ///     try reader.forEachTerm(collection: "notes", prefix: "sync") { term, items in
    ///         print(term, items)
    ///         return true
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - collection: The collection whose index to walk.
    ///   - prefix: Only terms starting with these bytes (already folded, as the index holds them).
    ///   - body: Receives the term and its document frequency; returns whether to go on.
    public func forEachTerm(collection: String, prefix: String = "", _ body: (String, Int) throws -> Bool) throws {
        let databases = try projection
        let collectionPrefix = Keys.collectionPrefix(collection)
        let segments = try SegmentDirectory.load(tx: tx, state: databases.state).readableSegments.map(\.id)
        var dead = DeadDocuments.Reader(tx: tx, database: databases.state)
        var walk = try TermWalk(
            tx: tx, database: databases.searchSegments, segments: segments,
            prefix: IndexKeys.term(collection: collection, term: prefix))
        while let (raw, lists) = try walk.next() {
            let frequency = try lists.reduce(0) { total, entry in
                total + (try entry.list.withUnsafeBytes { try dead.forEachLive(in: $0) { _ in } })
            }
            guard frequency > 0 else { continue }
            var term = String(decoding: raw.dropFirst(collectionPrefix.count), as: UTF8.self)
            if raw.dropFirst(collectionPrefix.count).first == IndexKeys.tagMarker {
                term = "#" + String(term.dropFirst())
            }
            guard try body(term, frequency) else { return }
        }
    }

    /// Every entry of the store's metadata, in key order: the engine's `store.*` keys, the sync
    /// module's `sync.*` keys and the application's own.
    ///
    /// ```swift
    /// for (key, value) in try store.read({ try $0.allMetadata() }) { print(key, value.count) }
    /// ```
    public func allMetadata() throws -> [(key: String, value: [UInt8])] {
        try metadata(withPrefix: "")
    }

    /// The active projection generation (`0` or `1`); its databases are named `g0.*` or `g1.*`.
    public func activeGeneration() throws -> Int {
        try StoreReader.activeGeneration(tx, store.schema)
    }

    /// The entries of the active generation's `state` database, in key order: the checkpoint
    /// `applied-through` (the seq through which every projection has applied the log), item
    /// counters `count.<collection>`, the declared indexes' run directory `index.runs`, the
    /// search index's directory `search.index`, and
    /// `projection-version.<name>`.
    public func projectionState() throws -> [(key: String, value: [UInt8])] {
        var entries: [(key: String, value: [UInt8])] = []
        try tx.forEach(in: try projection.state) { key, value in
            entries.append((String(decoding: key, as: UTF8.self), Array(value)))
            return true
        }
        return entries
    }
}
