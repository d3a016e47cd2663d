public import EventStore
public import EventSync
public import Logging

/// The server side of sync, without HTTP: the stores by name, their epochs, validation and
/// limits, on a storage ``SyncBackend``. The HTTP server (`SyncServer`) routes requests to it;
/// ``InProcessTransport`` calls it directly.
///
/// With the default backend each store lives in its own directory under the data directory and
/// is an ordinary ``EventStore/Store``: pushed events are appended to its log with its own seqs,
/// and its items and search index are maintained, so every `evstore` command works on it. With
/// the PostgreSQL backend (`SyncPostgres`) several server processes share the stores.
///
/// ```swift
/// let service = try SyncService(configuration: .init(dataDirectory: "/var/lib/evstore"))
/// let transport = InProcessTransport(service: service, storeName: "notes")
/// let report = try await Synchronizer(store: local, transport: transport).sync()
/// ```
///
/// Every request may carry a ``EventSync/ContinuityCheck``. When its epoch is the store's current
/// epoch but the store's log no longer matches the client's mark (the log is shorter, or its
/// ``EventSync/LogDigest`` differs), the store was restored from an older copy or lost commits:
/// the service starts a new epoch before answering, and every client then re-pushes what the
/// server lacks and re-pulls the log.
public final class SyncService: Sendable {
    /// How a service runs.
    public struct Configuration: Sendable {
        /// Where the stores are kept.
        public var backend: SyncBackend
        /// The limits on pushes and pages.
        public var limits = SyncLimits()
        /// How received events are checked (``EventStore/Store/Configuration/maxEventBytes``,
        /// ``EventStore/Store/Configuration/maxClockSkewMilliseconds``) and, with the LMDB
        /// backend, how its stores are opened (durability, search fields; the log-digest
        /// projection is added).
        public var storeConfiguration = Store.Configuration()
        /// Whether a push to a missing store creates it (when the token grants the store).
        public var createsStoresOnPush = true
        /// Whether a continuity check without a signature may prove that a store's log was
        /// rewound and start a new epoch, as before servers signed their marks (`false` by
        /// default: such a check gets ``EventSync/SyncError/Code/unverifiedMark``).
        ///
        /// Clients of an earlier release never send a signature, and do not know
        /// `unverified-mark`: after the server is restored from an older copy, those whose marks
        /// are past the restore point stop syncing (their writes stay pending, nothing is lost)
        /// until they are updated. Turn this on while such clients are in use and the server was
        /// restored; while it is on, any holder of a store's token can start a new epoch at will,
        /// which makes every client of the store sync everything again. A check with a signature
        /// that does not verify is refused either way.
        public var trustsUnsignedMarks = false
        /// The longest this service lets a live pull wait (at most ``EventSync/SyncLimits/maxPullWait``,
        /// which a client may ask for): a longer wait is shortened to it, and a pull that finds
        /// nothing answers at the end of it.
        public var pullWaitLimit: Duration = SyncLimits.maxPullWait
        /// The logger for store creation, epoch changes and pushes.
        public var logger = Logger(label: "eventstore.sync", factory: { _ in SwiftLogNoOpLogHandler() })

        /// Creates a configuration with default limits.
        public init(backend: SyncBackend) {
            self.backend = backend
        }

        /// Creates a configuration whose stores are LMDB environments under `dataDirectory`
        /// (``SyncBackend/lmdb(dataDirectory:)``).
        public init(dataDirectory: String) {
            self.init(backend: .lmdb(dataDirectory: dataDirectory))
        }
    }

    /// The configuration the service was created with.
    public let configuration: Configuration
    /// Where the stores are.
    let storage: any SyncStorage
    /// The live pulls' waits, which ``endLiveWaits()`` ends.
    let liveWaits = LiveWaits()

    /// The longest a live pull waits (``EventSync/SyncLimits/maxPullWait``).
    public static var maxPullWait: Duration { SyncLimits.maxPullWait }

    /// The projections a store needs for full continuity checks when it is served with
    /// ``serve(_:as:)`` (the service adds them to the stores it opens itself).
    public static var requiredProjections: [any Projection] { [LogDigestProjection()] }

    /// Creates a service on its backend (the LMDB backend creates its data directory when missing).
    ///
    /// - Throws: ``EventSync/SyncError`` when the backend cannot be prepared.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        self.storage = try configuration.backend.make(configuration)
    }

    /// Serves a store this process already opened (peer-to-peer sync with an app's own store);
    /// LMDB backend only.
    ///
    /// A store opened with ``requiredProjections`` in its configuration gets full continuity
    /// checks; another one gets checks on the event at the client's mark only.
    ///
    /// The name must be free: no store of the data directory has it, or a name that differs from
    /// it only by case, and no other store is served under such a name (serving the same store
    /// under the same name again changes nothing).
    ///
    /// ```swift
    /// let service = try SyncService(configuration: .init(dataDirectory: serverDirectory))
    /// try await service.serve(phoneStore, as: "phone")
    /// ```
    ///
    /// - Throws: ``EventSync/SyncError/Code/invalidStoreName`` for an invalid name or one another
    ///   store has; ``EventSync/SyncError/Code/unavailable`` while a push is creating a store of
    ///   that name (retry), on another backend, or once the service is closed.
    public func serve(_ store: Store, as name: String) async throws {
        try StoreName.validate(name)
        try await lmdb().serve(store, as: name)
    }

    /// The store with `name`, opened on first use; LMDB backend only.
    ///
    /// - Parameters:
    ///   - name: The store name (see ``StoreName``).
    ///   - create: Whether to create the store when it does not exist.
    /// - Throws: ``EventSync/SyncError`` with code ``EventSync/SyncError/Code/notFound``,
    ///   ``EventSync/SyncError/Code/invalidStoreName`` or ``EventSync/SyncError/Code/unavailable``
    ///   (also on another backend).
    public func store(named name: String, create: Bool = false) async throws -> Store {
        try StoreName.validate(name)
        return try await lmdb().served(name, create: create).store
    }

    /// The directory of the store `name` (LMDB backend), or `nil` on another backend.
    public func storePath(_ name: String) -> String? {
        (storage as? LMDBSyncStorage)?.storePath(name)
    }

    /// The names of the stores the backend holds (with the LMDB backend, also those served
    /// with ``serve(_:as:)``), sorted.
    ///
    /// - Throws: ``EventSync/SyncError`` when the backend cannot be read.
    public func storeNames() async throws -> [String] {
        do { return try await storage.storeNames() } catch { throw SyncService.syncError(error) }
    }

    /// Answers every live pull now: each one waiting answers at once with what its store holds,
    /// and later pulls do not wait. The first step of a graceful shutdown (`SyncServer` takes it
    /// when its service group shuts down gracefully), so that no client's pull holds the server
    /// up to ``maxPullWait``. It cannot be undone.
    public func endLiveWaits() {
        liveWaits.end()
    }

    /// Closes what the service opened (pending writes finish first). Later requests fail with
    /// ``EventSync/SyncError/Code/unavailable``.
    public func close() {
        liveWaits.end()
        storage.close()
    }

    private func lmdb() throws -> LMDBSyncStorage {
        guard let storage = storage as? LMDBSyncStorage else {
            throw SyncError(
                .unavailable,
                "serving an open store needs the LMDB backend (this service uses \(configuration.backend))")
        }
        return storage
    }

    // MARK: Errors and logs

    package static func logRotation(_ logger: Logger, name: String, check: ContinuityCheck, epoch: String) {
        logger.warning(
            "log continuity broken: the store does not hold what a client saw (restored from an older copy?); new epoch",
            metadata: [
                "store": "\(name)", "old-epoch": "\(check.epoch)", "client-mark": "\(check.seq)", "epoch": "\(epoch)",
            ])
    }

    /// Maps errors from the store to sync errors.
    package static func syncError(_ error: any Error) -> SyncError {
        if let error = error as? SyncError { return error }
        if let error = error as? EventStoreError {
            if let refused = SyncError(refusedEvent: error) { return refused }
            switch error.code {
            case .eventTooLarge, .batchTooLarge: return SyncError(.payloadTooLarge, error.message, cause: error)
            case .closed: return SyncError(.unavailable, "the store is closed", cause: error)
            case .diskFull: return SyncError(.insufficientStorage, error.message, cause: error)
            default: return SyncError(.internalError, error.message, cause: error)
            }
        }
        return SyncError(.internalError, "\(error)", cause: error)
    }
}
