internal import CLMDB

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
