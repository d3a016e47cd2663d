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

    /// The format written by this library.
    static let currentFormat: UInt64 = 1

    static func uint64(_ tx: ReadTransaction, _ db: Database, _ key: String) throws -> UInt64? {
        try Array(key.utf8).withUnsafeBytes { key in
            guard let value = try tx.value(forKey: key, in: db) else { return nil }
            guard value.count == 8 else { throw EventStoreError(.corrupt, "meta entry of \(value.count) bytes") }
            return UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))
        }
    }

    static func setUInt64(_ tx: WriteTransaction, _ db: Database, _ key: String, _ value: UInt64) throws {
        try tx.put(Keys.seq(value), forKey: Array(key.utf8), in: db)
    }
}
