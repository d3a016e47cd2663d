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
