internal import CLMDB

/// A handle to a named database inside an ``Environment``.
///
/// Handles are opened once (see ``WriteTransaction/openDatabase(named:options:)``) and then shared
/// freely between transactions and threads.
public struct Database: Sendable, Hashable, CustomStringConvertible {
    let handle: UInt32
    /// The database's name in the environment.
    public let name: String

    init(handle: UInt32, name: String) {
        self.handle = handle
        self.name = name
    }

    /// The database's name.
    public var description: String { name }
}

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

/// Page-level statistics of one database (`mdb_stat`).
public struct DatabaseStatistics: Sendable, Hashable {
    /// The page size in bytes.
    public var pageSize: Int
    /// The depth of the B-tree.
    public var depth: Int
    /// Internal (non-leaf) pages.
    public var branchPages: Int
    /// Leaf pages.
    public var leafPages: Int
    /// Overflow pages, which hold large values.
    public var overflowPages: Int
    /// The number of key/value pairs.
    public var entries: Int

    /// The bytes the database's pages occupy.
    public var bytes: Int { (branchPages + leafPages + overflowPages) * pageSize }

    init(_ stat: MDB_stat) {
        pageSize = Int(stat.ms_psize)
        depth = Int(stat.ms_depth)
        branchPages = stat.ms_branch_pages
        leafPages = stat.ms_leaf_pages
        overflowPages = stat.ms_overflow_pages
        entries = stat.ms_entries
    }
}

/// Facts about an open environment (`mdb_env_info`).
public struct EnvironmentInfo: Sendable, Hashable {
    /// The current size of the memory map in bytes.
    public var mapSize: Int
    /// The bytes in use: the last used page plus one, times the page size.
    public var usedBytes: Int
    /// The id of the last committed transaction.
    public var lastTransactionID: Int
    /// The size of the reader table.
    public var maxReaders: Int
    /// Reader slots currently taken.
    public var readersInUse: Int
    /// The page size in bytes.
    public var pageSize: Int
}
