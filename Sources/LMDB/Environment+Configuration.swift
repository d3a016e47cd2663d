extension Environment {
    /// How an environment is opened. A `Sendable` value with sensible defaults.
    ///
    /// ```swift
    /// var configuration = Environment.Configuration()
    /// configuration.mapSize = 1 << 20        // start small; the map grows when it fills
    /// configuration.durability = .relaxed
    /// let environment = try Environment.open(path: "/tmp/db", configuration: configuration)
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The initial size of the memory map in bytes. It reserves address space, not disk or RAM.
        ///
        /// The map grows automatically (doubling) when it fills, up to ``maximumMapSize``.
        public var mapSize: Int = 1 << 33
        /// The largest size automatic growth may reach. Past it, writes throw ``LMDBError/mapFull``.
        public var maximumMapSize: Int = 1 << 40
        /// Whether a full map is grown and the write retried (the default), or reported.
        public var growsAutomatically: Bool = true
        /// The number of named databases the environment may hold.
        public var maxDatabases: Int = 32
        /// The size of the reader lock table: concurrent read transactions across all processes.
        public var maxReaders: Int = 512
        /// The commit durability policy.
        public var durability: Durability = .durable
        /// Opens the environment read-only: writes are refused, databases must already exist.
        public var readOnly: Bool = false
        /// Creates the directory (and its parents) when it does not exist. Ignored when read-only.
        public var createsDirectory: Bool = true

        /// Creates the default configuration.
        public init() {}
    }

    /// How a commit reaches the disk.
    public struct Durability: Sendable, Hashable, CustomStringConvertible {
        enum Mode: Hashable {
            case durable, relaxed, bulk
        }
        let mode: Mode

        /// Every commit is flushed to disk before it returns (two `fsync`s). The default.
        public static let durable = Durability(mode: .durable)
        /// Commits skip the meta-page flush: crash-consistent, but a system crash may undo the
        /// last committed transaction.
        public static let relaxed = Durability(mode: .relaxed)
        /// Commits are not flushed at all; call ``Environment/sync(force:)`` at the end.
        /// Use only for data that can be regenerated (imports, rebuilds).
        public static let bulk = Durability(mode: .bulk)

        /// The policy's name: `durable`, `relaxed` or `bulk`.
        public var description: String {
            switch mode {
            case .durable: "durable"
            case .relaxed: "relaxed"
            case .bulk: "bulk"
            }
        }
    }
}
