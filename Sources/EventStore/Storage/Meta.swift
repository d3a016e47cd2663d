import LMDB

/// Names and encodings of the entries in the `meta` database.
///
/// Keys starting with `store.` belong to the engine; applications and the sync module use
/// their own prefixes through ``StoreWriter/setMetadata(_:forKey:)``.
enum Meta {
    /// The store format version (u32). A store with a greater version is refused.
    static let format = "store.format"
    /// This replica's id (16 bytes).
    static let replica = "store.replica"
    /// The HLC high-water mark (u64).
    static let hlc = "store.hlc"
    /// The last origin sequence this replica used (u64).
    static let originSequence = "store.origin-seq"
    /// The active projection generation (u64: 0 or 1).
    static let generation = "store.generation"
    /// The store's creation time in milliseconds (u64).
    static let created = "store.created"
    /// The replica ids this store wrote under before its current one (16 bytes each, oldest
    /// first): see ``Store/restamp(from:)``.
    static let retiredReplicas = "store.retired-replicas"
    /// Present while the projections must be rebuilt from the log (set with a log rewrite
    /// that changes stamps, removed by the rebuild's final commit).
    static let rebuildNeeded = "store.rebuild-needed"

    /// The format written by this library. Format 1 kept the search index in per-term
    /// duplicate-sorted trees; format 2 keeps it in segments; format 3 keeps each item's search
    /// doc id in its `items` entry and the dead-document bitmap and collection totals in `state`
    /// (fewer trees per commit); format 4 keeps an item's newest seqs in its record and older ones
    /// in chunks (``ItemHistory``) instead of one `items` entry per event; format 5 packs the
    /// lists of adjacent terms of a search segment into blocks (``SegmentEntry``); format 6 keeps
    /// the declared indexes in sorted runs (``IndexRuns``) instead of one tree of entries; format 7
    /// may name the search merge under way by a token (directory format 4, see
    /// ``SegmentDirectory/Merge/token``), which a library of format 6 cannot read. Opening an
    /// older store for writing upgrades it: the databases the format no longer has are dropped
    /// and the projections rebuilt (from formats 4 and 5, only the format number changes unless
    /// the store holds declared index entries: format-4 segment entries are format-5 entries of
    /// one term; from format 6, only the format number changes).
    static let currentFormat: UInt64 = 7

    static func uint64(_ tx: ReadTransaction, _ db: Database, _ key: String) throws -> UInt64? {
        try Array(key.utf8).withUnsafeBytes { key in
            guard let value = try tx.value(forKey: key, in: db) else { return nil }
            guard value.count == 8 else { throw EventStoreError(.corrupt, "meta entry of \(value.count) bytes") }
            return UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))
        }
    }

    static func replicaID(_ tx: ReadTransaction, _ db: Database) throws -> ReplicaID {
        try Array(replica.utf8).withUnsafeBytes { key in
            guard let value = try tx.value(forKey: key, in: db), value.count == 16 else {
                throw EventStoreError(.notAStore, "the store's metadata has no replica id")
            }
            var reader = ByteReader(value)
            return try reader.readReplicaID()
        }
    }

    static func setReplicaID(_ tx: WriteTransaction, _ db: Database, _ id: ReplicaID) throws {
        var writer = ByteWriter(capacity: 16)
        writer.write(id)
        try tx.put(writer.bytes, forKey: Array(replica.utf8), in: db)
    }

    static func retiredReplicaIDs(_ tx: ReadTransaction, _ db: Database) throws -> [ReplicaID] {
        try Array(retiredReplicas.utf8).withUnsafeBytes { key in
            guard let value = try tx.value(forKey: key, in: db) else { return [] }
            guard value.count % 16 == 0 else {
                throw EventStoreError(.corrupt, "retired replica ids of \(value.count) bytes")
            }
            var reader = ByteReader(value)
            return try (0..<(value.count / 16)).map { _ in try reader.readReplicaID() }
        }
    }

    static func setRetiredReplicaIDs(_ tx: WriteTransaction, _ db: Database, _ ids: [ReplicaID]) throws {
        var writer = ByteWriter(capacity: 16 * ids.count)
        for id in ids { writer.write(id) }
        try tx.put(writer.bytes, forKey: Array(retiredReplicas.utf8), in: db)
    }

    /// Whether ``rebuildNeeded`` is set.
    static func rebuildIsNeeded(_ tx: ReadTransaction, _ db: Database) throws -> Bool {
        try tx.value(forKey: Array(rebuildNeeded.utf8), in: db) != nil
    }

    /// Sets or clears ``rebuildNeeded``.
    static func setRebuildNeeded(_ tx: WriteTransaction, _ db: Database, _ needed: Bool) throws {
        if needed {
            try tx.put(Keys.seq(1), forKey: Array(rebuildNeeded.utf8), in: db)
        } else {
            _ = try tx.delete(Array(rebuildNeeded.utf8), in: db)
        }
    }

    static func setUInt64(_ tx: WriteTransaction, _ db: Database, _ key: String, _ value: UInt64) throws {
        try tx.put(Keys.seq(value), forKey: Array(key.utf8), in: db)
    }
}
