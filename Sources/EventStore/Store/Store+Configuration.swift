public import Logging

extension Store {
    /// How a store is opened: limits, durability, search and custom projections.
    ///
    /// ```swift
    /// var configuration = Store.Configuration()
    /// configuration.durability = .relaxed
    /// configuration.search.collections["tasks"] = [.init(name: "title", weight: 3)]
    /// let store = try Store.open(at: path, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The initial map size in bytes; the map grows automatically when it fills.
        public var mapSize: Int = 1 << 33
        /// The commit durability policy.
        public var durability: Durability = .durable
        /// The size of the reader table: concurrent read transactions across all processes.
        public var maxReaders: Int = 512
        /// Opens the store read-only (inspection while another process writes).
        ///
        /// A read-only open needs an existing store and creates nothing. When the store's
        /// directory is not writable (a store owned by another user, a read-only mount), it reads
        /// without the lock file: safe only while no other process writes the store (see
        /// ``Store/usesLockFile``).
        public var readOnly: Bool = false
        /// The largest encoded event accepted, in bytes.
        public var maxEventBytes: Int = 1 << 20
        /// The most events one batch may hold.
        public var maxBatchEvents: Int = 10_000
        /// The most encoded bytes one batch may hold.
        public var maxBatchBytes: Int = 32 << 20
        /// How far ahead of this replica's clock a received stamp may be, in milliseconds
        /// (``Store/ingest(_:)``, and a sync server's pushes; a sync client's pulls have a bound
        /// of their own, `Synchronizer.Configuration.maxPulledClockSkew` in EventSync).
        public var maxClockSkewMilliseconds: UInt64 = 60_000
        /// The most events one group commit gathers from concurrent writers.
        public var groupCommitMaxEvents: Int = 20_000
        /// Which fields are searchable, with which weights.
        ///
        /// The store records the configuration it was created with (``ConfigurationRecord``);
        /// opening it for writing with another one follows ``searchChange``. After the open,
        /// ``Store/configuration`` holds the search configuration in effect: the recorded one for
        /// read-only opens and ``SearchChange/useStored``.
        public var search = SearchConfiguration()
        /// What an open does when ``search`` differs from the configuration the store records:
        /// fail (``SearchChange/refuse``, the default), re-index (``SearchChange/reindex``), or use
        /// the store's own (``SearchChange/useStored``).
        public var searchChange: SearchChange = .refuse
        /// The declared indexes that ``Query``s use, maintained in the same transaction as each
        /// append (see <doc:Queries>).
        ///
        /// The store records its indexes (``ConfigurationRecord/indexes``); what a writable open
        /// does with indexes the store lacks or has in addition follows ``indexChange``. After the
        /// open, ``Store/configuration`` holds the indexes in effect.
        public var indexes: [IndexDefinition] = []
        /// What an open does when ``indexes`` differ from the indexes the store records: build the
        /// new ones and keep the others (``IndexChange/build``, the default), make the store's
        /// indexes exactly these (``IndexChange/replace``), fail (``IndexChange/refuse``) or use
        /// the store's own (``IndexChange/useStored``).
        public var indexChange: IndexChange = .build
        /// Application projections, maintained in the same transaction as each append.
        public var projections: [any Projection] = []
        /// The collection schemas: each collection's version, upcasters and typed-model defaults
        /// (see <doc:SchemaEvolution>).
        ///
        /// The store records each schema's version and upcaster versions
        /// (``ConfigurationRecord/schemas``). A writable open with a raised version, or other
        /// upcasters, rebuilds the projections from the log; a lower version than recorded, or
        /// no schema for a collection recorded with upcasters, fails with
        /// ``EventStoreError/Code/configurationMismatch``, whatever ``searchChange`` says. Tools
        /// (``SearchChange/useStored``, declaring none) keep the recorded schemas and refuse what
        /// needs upcasters they cannot run. A read-only open that declares other schemas than
        /// the store records (a raised version, other upcasters) fails with
        /// ``EventStoreError/Code/configurationMismatch``: the projections were built with the
        /// recorded ones, and only a writable open rebuilds them.
        public var schemas: [CollectionSchema] = []
        /// Whether a writable open that finds the projections out of date (a raised schema
        /// version, a declared re-index, a tokenizer or format upgrade) returns at once and
        /// rebuilds them in the background, instead of rebuilding before it returns (the default).
        ///
        /// Meanwhile readers see the projections as they were, in full (the rebuild switches
        /// generations in one commit), and writes wait for the rebuild. Wait for it with
        /// ``Store/rebuildFinished()``; follow it with ``rebuildProgress``.
        public var rebuildsInBackground = false
        /// Called as a rebuild that an open starts (in the open or in the background) goes on.
        public var rebuildProgress: (@Sendable (Store.Progress) -> Void)?
        /// How this open interprets events: ``schemas`` with the store's record (set by the open).
        var schemaRegistry = SchemaRegistry.none
        /// The most item records a rebuild or a verify holds in memory (about 1 KiB each for notes
        /// of a few hundred bytes); with more items, it replays the log in passes, one range of
        /// items each (see <doc:Projections>). Tests and the crash tool lower it.
        package var replayRecordLimit = 65_536
        /// The most bytes of events (as the log holds them) a rebuild or a verify applies to the
        /// records it holds in memory; past it, as past ``replayRecordLimit``, it reads and writes
        /// them in the store. Items of 100 KB would otherwise fill memory long before 65,536 of
        /// them. Tests lower it.
        var replayRecordBytes = 64 << 20
        /// New search documents a transaction hands to the tokenizer thread at a time; a
        /// transaction with fewer tokenizes them on the writer (see ``DocumentTokenizer``). Tests
        /// set it to 1 (every document on the tokenizer thread) and to `Int.max` (none).
        var tokenizerChunk = 16
        /// Whether the search index's merge steps are computed between commits on another thread
        /// (``MergeAhead``) instead of inside the commits that spend their budget. Tests turn it
        /// off to follow the merge policy commit by commit.
        var mergesAhead = true
        /// The events a rebuild or a verify replays per transaction. Tests lower it.
        var rebuildChunkEvents: UInt64 = 20_000
        /// The logger for store events (open, growth, rebuilds). Defaults to a no-op logger.
        public var logger = Logger(label: "eventstore", factory: { _ in SwiftLogNoOpLogHandler() })
        /// The replica id for a *new* store (`nil`: from ``newReplicaID``). Ignored when the
        /// store exists.
        public var replicaID: ReplicaID?
        /// Makes replica ids: for a new store without ``replicaID``, and when a store moves to a
        /// new id (``Store/restamp(from:)``). Random by default; replaceable so that tests can
        /// replay a run.
        public var newReplicaID: @Sendable () -> ReplicaID = { ReplicaID.random() }
        /// Physical time in milliseconds since 1970 (replaceable in tests).
        public var physicalClock: @Sendable () -> UInt64 = systemMilliseconds

        /// Creates the default configuration.
        public init() {}
    }

    /// How commits reach the disk.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// Every commit is on disk before the write returns. The default.
        case durable
        /// Crash-consistent, but a system crash may undo the last commit (`MDB_NOMETASYNC`).
        case relaxed
        /// No flush per commit (`MDB_NOSYNC`); for imports, with a flush at the end.
        case bulk
    }
}
