import LMDB
import Logging
import Synchronization

/// An event store: an append-only event log with items and a search index derived from it.
///
/// ```swift
/// let store = try Store.open(at: "/var/lib/app/store")
/// try await store.put("notes", id: "n1", fields: ["title": "Sync design", "tags": ["work"]])
/// let note = try store.item("notes", "n1")
/// let hits = try store.search("sync", in: "notes")
/// ```
///
/// One instance per path and process: opening a path this process already opened returns the
/// same store. Writes from any number of tasks are group-committed by one writer thread; reads
/// run on the caller's thread in short read transactions and never block writes.
///
/// `Store` is `Sendable`: the storage environment is thread-safe, write transactions live only on
/// the writer thread, and read transactions never escape their closure.
public final class Store: @unchecked Sendable {
    /// The store's directory.
    public let path: String
    /// The configuration the store was opened with, with the search configuration in effect:
    /// the one the store records for read-only opens and ``SearchChange/useStored`` (see
    /// ``ConfigurationRecord``).
    public let configuration: Configuration
    /// The rebuild this open started in the background (finished when none).
    private let openRebuild: BackgroundRebuild
    /// What the open that made this instance declared (search, indexes, schemas, projections):
    /// another open of the path in this process must declare the same.
    private let declared: ConfigurationRecord
    /// The replica id this store writes new events under: created with the store, and
    /// replaced only when the store finds that it reused ids it had already published (a
    /// restored backup, a copy on a second device — see ``restamp(from:)``).
    public var replicaID: ReplicaID { identity.withLock { $0 } }

    let environment: Environment
    let schema: Schema
    let logger: Logger
    let writer: Writer?
    let commits = CommitSignal()
    /// Computes the search index's merge steps between commits (`nil` when read-only).
    let mergeAhead: MergeAhead?
    /// The search index's segment terms, for typo lookups (see ``SegmentTermCache``).
    let searchTerms = SegmentTermCache()
    /// The clock as of the last commit; each write transaction starts from it.
    let clock: Mutex<HybridLogicalClock>
    /// The current replica id as of the last commit that changed it.
    let identity: Mutex<ReplicaID>
    /// The custom projections the store records and this writable open does not run (a tool's
    /// open, ``SearchChange/useStored``): the first commit that changes the log or rebuilds the
    /// projections marks them stale (``markUnregisteredProjectionsStale(_:)``).
    let unregisteredProjections: Set<String>

    private static let registry = Mutex<[String: WeakStore]>([:])
    /// The turns of the opens of each path.
    private static let opening = KeyedTurns()

    /// Opens the store at `path`, creating it when the directory is empty or missing.
    ///
    /// Opens of one path in this process take turns (the second gets the instance the first
    /// made); opens of other paths go on meanwhile, also while one rebuilds its projections.
    ///
    /// - Parameters:
    ///   - path: The store's directory.
    ///   - configuration: Limits, durability, search fields and projections.
    /// - Returns: The open store (the existing instance when this process already opened `path`;
    ///   a writable open must then declare the same search fields, indexes and schemas as the
    ///   open that made it, and no projection it does not run, or it throws
    ///   ``EventStoreError/Code/configurationMismatch``: close the store to reopen it otherwise.
    ///   A read-only open and one with ``SearchChange/useStored`` take the instance as it is,
    ///   unless they declare other schemas than the open that made it).
    /// - Throws: ``EventStoreError`` with code ``EventStoreError/Code/notADirectory``,
    ///   ``EventStoreError/Code/notAStore`` (a foreign or damaged file),
    ///   ``EventStoreError/Code/unsupportedFormat`` (written by a newer version),
    ///   ``EventStoreError/Code/configurationMismatch`` (opened for writing with another search
    ///   configuration than the store records; see ``Configuration/searchChange``),
    ///   ``EventStoreError/Code/corrupt`` (a damaged configuration record),
    ///   ``EventStoreError/Code/permissionDenied`` (files this process may not read, or write
    ///   when writable), ``EventStoreError/Code/notFound`` (read-only, and the directory or its
    ///   `data.mdb` is missing), or ``EventStoreError/Code/diskFull`` (a store that could not be
    ///   created on a full disk is created afresh by a later open). A read-only open creates
    ///   nothing where there is no store.
    public static func open(at path: String, configuration: Configuration = Configuration()) throws -> Store {
        let environment = try openEnvironment(path: path, configuration: configuration)
        // Opens of one path take turns; opens of other paths go on meanwhile, also while this
        // one rebuilds its projections.
        return try opening.withTurn(environment.path) {
            try openOnce(environment, configuration: configuration)
        }
    }

    /// The store of `environment`: this process's open instance, or a new one.
    private static func openOnce(_ environment: Environment, configuration: Configuration) throws -> Store {
        let path = environment.path
        let existing = registry.withLock { registry in registry[path]?.store }
        // (An instance on another environment is one whose files were removed since.)
        if let existing, !existing.isClosed, existing.environment === environment {
            if existing.configuration.readOnly && !configuration.readOnly {
                throw EventStoreError(.readOnly, "\(path) is already open read-only in this process")
            }
            let wanted = ConfigurationRecord(configuration: try configuration.foldingSchemas())
            // An open is held to the schemas it declares, whatever else it leaves to the store.
            if !configuration.readOnly && configuration.searchChange != .useStored
                && !wanted.isMet(by: existing.declared)
                || !configuration.schemas.isEmpty && wanted.schemas != existing.declared.schemas
            {
                throw EventStoreError(
                    .configurationMismatch,
                    "\(path) is already open in this process with another configuration (search fields, indexes, "
                        + "schemas, or a projection it does not run): close that store before opening it with this one"
                )
            }
            return existing
        }
        let store = try Store(environment: environment, configuration: configuration)
        registry.withLock { registry in registry[path] = WeakStore(store: store) }
        return store
    }

    private init(environment: Environment, configuration declared: Configuration) throws {
        let configuration = try declared.foldingSchemas()
        self.declared = ConfigurationRecord(configuration: configuration)
        self.environment = environment
        self.path = environment.path
        self.logger = configuration.logger
        let bootstrap = try StoreBootstrap.run(environment: environment, configuration: configuration)
        var effective = configuration
        effective.search = bootstrap.search
        effective.indexes = bootstrap.indexes
        effective.schemaRegistry = SchemaRegistry(schemas: configuration.schemas, recorded: bootstrap.schemas)
        self.configuration = effective
        self.openRebuild =
            bootstrap.needsRebuild && !configuration.readOnly && configuration.rebuildsInBackground
            ? BackgroundRebuild() : .finished()
        self.schema = bootstrap.schema
        self.identity = Mutex(bootstrap.replicaID)
        let stored = try environment.read { tx in try Meta.uint64(tx, bootstrap.schema.meta, Meta.hlc) ?? 0 }
        self.clock = Mutex(
            HybridLogicalClock(
                last: HLCTimestamp(rawValue: stored), maxSkewMilliseconds: configuration.maxClockSkewMilliseconds,
                physicalTime: configuration.physicalClock))
        let registered = Set(configuration.projections.map(\.name))
        self.unregisteredProjections =
            configuration.readOnly || configuration.searchChange != .useStored
            ? []
            : try environment.read { tx in
                Set(try Meta.configurationRecord(tx, bootstrap.schema.meta)?.projections.map(\.name) ?? [])
                    .subtracting(registered)
            }
        self.writer = configuration.readOnly ? nil : Writer(label: "eventstore.writer")
        self.mergeAhead =
            configuration.readOnly || !configuration.mergesAhead
            ? nil : MergeAhead(environment: environment, schema: bootstrap.schema, logger: configuration.logger)
        writer?.store = self
        logger.debug(
            "store opened",
            metadata: ["path": "\(path)", "replica": "\(replicaID)", "created": "\(bootstrap.created)"])
        guard bootstrap.needsRebuild && !configuration.readOnly, let writer else { return }
        let when = configuration.rebuildsInBackground ? " in the background" : ""
        logger.info(
            "projections out of date (schemas, configuration or custom projections changed, stamps restamped, or the store format upgraded); rebuilding\(when)",
            metadata: ["path": "\(path)"])
        guard configuration.rebuildsInBackground else {
            try rebuildProjections(progress: configuration.rebuildProgress)
            return
        }
        let rebuild = openRebuild
        let progress = configuration.rebuildProgress
        let logger = logger
        let path = path
        writer.submit(
            Writer.Request(
                eventCount: 0, body: { _ in },
                complete: { outcome in
                    if case .failure(let error) = outcome {
                        logger.error("background rebuild failed", metadata: ["path": "\(path)", "error": "\(error)"])
                    }
                    rebuild.finish(outcome)
                },
                exclusive: { store in try store.performRebuild(progress: progress) }))
    }

    /// Returns when the rebuild that this open started has finished (at once when it started
    /// none, or rebuilt before it returned; see ``Configuration/rebuildsInBackground``).
    ///
    /// ```swift
    /// configuration.rebuildsInBackground = true
    /// let store = try Store.open(at: path, configuration: configuration)   // returns at once
    /// try await store.rebuildFinished()                                    // items in the new shape
    /// ```
    ///
    /// - Throws: The rebuild's error; the store then stays marked for a rebuild, which its next
    ///   writable open tries again.
    public func rebuildFinished() async throws {
        try await openRebuild.wait()
    }

    /// Whether a rebuild that this open started in the background is still running.
    public var isRebuilding: Bool { openRebuild.isRunning }

    deinit {
        writer?.stop()
        mergeAhead?.cancel()
    }

    private static func openEnvironment(path: String, configuration: Configuration) throws -> Environment {
        var options = Environment.Configuration()
        options.mapSize = configuration.mapSize
        options.readOnly = configuration.readOnly
        options.durability = configuration.durability.lmdb
        options.maxReaders = configuration.maxReaders
        options.maxDatabases = Schema.databaseCount(customProjections: configuration.projections)
        do {
            return try Environment.open(path: path, configuration: options)
        } catch let error as LMDBError {
            throw EventStoreError(openFailure: error, path: path)
        }
    }

    /// Whether readers register in the store's lock file (`lock.mdb`), as they do normally.
    ///
    /// `false` only for a store opened read-only (``Configuration/readOnly``) whose directory this
    /// process may not write: it is then read without the lock file, which is safe only while no
    /// other process writes the store (a writer does not see such readers and may reuse the pages
    /// they read).
    public var usesLockFile: Bool { environment.usesLockFile }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { writer?.isStopped ?? closedReadOnly.withLock { $0 } }
    private let closedReadOnly = Mutex(false)

    /// Finishes pending writes and stops the writer. Later writes throw
    /// ``EventStoreError/Code/closed``; the storage closes when the last reference goes away.
    public func close() {
        writer?.stop()
        mergeAhead?.stop()
        closedReadOnly.withLock { $0 = true }
        commits.finish()
        // Only this instance's entry: a closed store's path may already have a new instance.
        Store.registry.withLock { registry in
            if registry[path]?.store === self { registry[path] = nil }
        }
    }

    /// Changes the durability policy for later commits (see ``Durability``).
    public func setDurability(_ durability: Durability) throws {
        try environment.setDurability(durability.lmdb)
    }

    /// Flushes all committed data to disk (after ``Durability/bulk`` writes).
    public func sync() throws {
        try environment.sync(force: true)
    }
}

private struct WeakStore {
    weak var store: Store?
}

extension Store.Durability {
    var lmdb: Environment.Durability {
        switch self {
        case .durable: .durable
        case .relaxed: .relaxed
        case .bulk: .bulk
        }
    }
}
