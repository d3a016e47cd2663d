internal import CLMDB

/// Flags for opening a named database.
public struct DatabaseOptions: OptionSet, Sendable, Hashable {
    /// The raw LMDB flags.
    public let rawValue: UInt32
    /// Creates options from raw LMDB flags.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Create the database when it does not exist (write transactions only).
    public static let create = DatabaseOptions(rawValue: UInt32(MDB_CREATE))
    /// Keys may hold several sorted values.
    public static let duplicateSort = DatabaseOptions(rawValue: UInt32(MDB_DUPSORT))
    /// With ``duplicateSort``: all values of a key have the same size.
    public static let duplicateFixed = DatabaseOptions(rawValue: UInt32(MDB_DUPFIXED))
}

/// Flags for a single put.
public struct PutOptions: OptionSet, Sendable, Hashable {
    /// The raw LMDB flags.
    public let rawValue: UInt32
    /// Creates options from raw LMDB flags.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Do not replace an existing key: the put reports that the key exists instead.
    public static let noOverwrite = PutOptions(rawValue: UInt32(MDB_NOOVERWRITE))
    /// The key sorts after every existing key (fast bulk load). Out of order → ``LMDBError/keyExists``.
    public static let append = PutOptions(rawValue: UInt32(MDB_APPEND))
    /// For ``DatabaseOptions/duplicateSort``: the value sorts after the key's existing values.
    public static let appendDuplicate = PutOptions(rawValue: UInt32(MDB_APPENDDUP))
    /// For ``DatabaseOptions/duplicateSort``: do not add a value the key already holds.
    public static let noDuplicateData = PutOptions(rawValue: UInt32(MDB_NODUPDATA))
}
