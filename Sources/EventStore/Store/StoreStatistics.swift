import LMDB

/// Sizes and counts of a store, for `evstore stats` and monitoring.
public struct StoreStatistics: Sendable, Hashable {
    /// Page statistics of one named database.
    public struct DatabaseStats: Sendable, Hashable {
        /// The database's name (`events`, `g0.items`, …).
        public var name: String
        /// Key/value pairs.
        public var entries: Int
        /// B-tree depth.
        public var depth: Int
        /// Branch pages.
        public var branchPages: Int
        /// Leaf pages.
        public var leafPages: Int
        /// Overflow pages (large values).
        public var overflowPages: Int
        /// Bytes in pages.
        public var bytes: Int
    }

    /// The log head (number of events).
    public var events: UInt64
    /// Existing items per collection.
    public var items: [String: Int]
    /// Conflict records.
    public var conflicts: Int
    /// The current map size in bytes.
    public var mapSize: Int
    /// Bytes in use in the data file.
    public var usedBytes: Int
    /// The page size in bytes.
    public var pageSize: Int
    /// Reader slots in use / available.
    public var readers: (inUse: Int, max: Int) { (readersInUse, maxReaders) }
    /// Reader slots in use.
    public var readersInUse: Int
    /// Reader slots available.
    public var maxReaders: Int
    /// The active projection generation (0 or 1).
    public var generation: Int
    /// The id of the last committed write transaction: it changes whenever anything is written
    /// (events, projections, metadata).
    public var lastTransactionID: Int
    /// Every named database of the log and of the active generation.
    public var databases: [DatabaseStats]
}

extension Store {
    /// Counts, sizes per named database, page statistics, map size and use.
    public func statistics() throws -> StoreStatistics {
        let info = environment.info()
        return try read { reader in
            let generation = try StoreReader.activeGeneration(reader.tx, schema)
            let projection = try reader.projection
            var databases: [StoreStatistics.DatabaseStats] = []
            let named =
                [("events", schema.events), ("event_ids", schema.eventIDs), ("meta", schema.meta)]
                + projection.all.map { ("g\(generation).\($0.name)", $0.database) }
            for (name, database) in named {
                let stats = try reader.tx.statistics(of: database)
                databases.append(
                    .init(
                        name: name, entries: stats.entries, depth: stats.depth, branchPages: stats.branchPages,
                        leafPages: stats.leafPages, overflowPages: stats.overflowPages, bytes: stats.bytes))
            }
            var items: [String: Int] = [:]
            for collection in try reader.collections() { items[collection] = try reader.count(in: collection) }
            return StoreStatistics(
                events: try reader.head(), items: items, conflicts: try reader.tx.count(of: projection.conflicts),
                mapSize: info.mapSize, usedBytes: info.usedBytes, pageSize: info.pageSize,
                readersInUse: info.readersInUse, maxReaders: info.maxReaders, generation: generation,
                lastTransactionID: info.lastTransactionID, databases: databases)
        }
    }
}
