public import EventStore
public import Logging
import Foundation
import Synchronization

/// The server side of sync, without HTTP: the stores by name, their epochs, validation and
/// limits. The HTTP server routes requests to it; ``InProcessTransport`` calls it directly.
///
/// Each store lives in its own directory under the data directory and is an ordinary
/// ``EventStore/Store``: pushed events are appended to its log with its own seqs, and its items
/// and search index are maintained, so every `evstore` command works on it.
///
/// ```swift
/// let service = try SyncService(configuration: .init(dataDirectory: "/var/lib/evstore"))
/// let transport = InProcessTransport(service: service, storeName: "notes")
/// let report = try await Synchronizer(store: local, transport: transport).sync()
/// ```
///
/// Every request may carry a ``ContinuityCheck``. When its epoch is the store's current epoch
/// but the store's log no longer matches the client's mark (the log is shorter, or its
/// ``LogDigest`` differs), the store was restored from an older copy or lost commits: the
/// service starts a new epoch before answering, and every client then re-pushes what the
/// server lacks and re-pulls the log. See <doc:Sync>.
public final class SyncService: Sendable {
    /// How a service runs.
    public struct Configuration: Sendable {
        /// The directory holding one store directory per store name.
        public var dataDirectory: String
        /// The limits on pushes and pages.
        public var limits = SyncLimits()
        /// The configuration of the stores (durability, clock, skew bound, search fields). The
        /// log-digest projection is added to it.
        public var storeConfiguration = Store.Configuration()
        /// Whether a push to a missing store creates it (when the token grants the store).
        public var createsStoresOnPush = true
        /// The longest this service lets a live pull wait (at most ``SyncService/maxPullWait``,
        /// which a client may ask for): a longer wait is shortened to it, and a pull that finds
        /// nothing answers at the end of it.
        public var pullWaitLimit: Duration = SyncService.maxPullWait
        /// The logger for store creation, epoch changes and pushes.
        public var logger = Logger(label: "eventstore.sync", factory: { _ in SwiftLogNoOpLogHandler() })

        /// Creates a configuration with default limits.
        public init(dataDirectory: String) {
            self.dataDirectory = dataDirectory
        }
    }

    /// The configuration the service was created with.
    public let configuration: Configuration

    struct ServedStore: Sendable {
        let store: Store
        /// Whether the service opened the store (and closes it).
        let owned: Bool
        /// Whether the store keeps the log-digest chain (otherwise digests cover one event).
        let chained: Bool
    }

    private struct State {
        var stores: [String: ServedStore] = [:]
        var closed = false
    }

    private let state = Mutex(State())
    /// Held while a store is opened (or a failed creation cleaned up), so that no open of the
    /// same store runs while the files of a failed creation are removed.
    private let opening = Mutex(())

    /// The meta key of a store's epoch.
    package static let epochKey = "sync.epoch"
    /// The meta key prefix of the per-origin high-water marks.
    package static let originKeyPrefix = "sync.origin."

    /// The projections a store needs for full continuity checks when it is served with
    /// ``serve(_:as:)`` (the service adds them to the stores it opens itself).
    public static var requiredProjections: [any Projection] { [LogDigestProjection()] }

    /// Creates a service; creates the data directory when missing.
    ///
    /// - Throws: ``SyncError`` when the data directory cannot be created.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        do {
            try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw SyncError(.internalError, "cannot create data directory \(configuration.dataDirectory)", cause: error)
        }
    }

    /// Serves a store this process already opened (peer-to-peer sync with an app's own store).
    ///
    /// A store opened with ``requiredProjections`` in its configuration gets full continuity
    /// checks; another one gets checks on the event at the client's mark only.
    public func serve(_ store: Store, as name: String) async throws {
        try StoreName.validate(name)
        let served = ServedStore(
            store: store, owned: false,
            chained: store.configuration.projections.contains { $0.name == LogDigestProjection.projectionName })
        try await SyncService.ensureEpoch(store, logger: configuration.logger, name: name)
        try state.withLock { state in
            guard !state.closed else { throw SyncError(.unavailable, "the sync service is closed") }
            state.stores[name] = served
        }
    }

    /// The store with `name`, opened on first use.
    ///
    /// - Parameters:
    ///   - name: The store name (see ``StoreName``).
    ///   - create: Whether to create the store when it does not exist.
    /// - Throws: ``SyncError`` with code ``SyncError/Code/notFound``,
    ///   ``SyncError/Code/invalidStoreName`` or ``SyncError/Code/unavailable``.
    public func store(named name: String, create: Bool = false) async throws -> Store {
        try await served(name, create: create).store
    }

    func served(_ name: String, create: Bool) async throws -> ServedStore {
        try StoreName.validate(name)
        let existing = try state.withLock { state -> ServedStore? in
            guard !state.closed else { throw SyncError(.unavailable, "the sync service is closed") }
            return state.stores[name]
        }
        if let existing { return existing }
        let path = storePath(name)
        let exists = FileManager.default.fileExists(atPath: path + "/data.mdb")
        guard exists || create else { throw SyncError(.notFound, "no store named \(name.debugDescription)") }
        var storeConfiguration = configuration.storeConfiguration
        storeConfiguration.readOnly = false
        if !storeConfiguration.projections.contains(where: { $0.name == LogDigestProjection.projectionName }) {
            storeConfiguration.projections.append(LogDigestProjection())
        }
        let store = try opening.withLock { _ in
            try SyncService.open(name, at: path, creating: !exists, storeConfiguration)
        }
        if !exists { configuration.logger.notice("store created", metadata: ["store": "\(name)", "path": "\(path)"]) }
        try await SyncService.ensureEpoch(store, logger: configuration.logger, name: name)
        let served = ServedStore(
            store: store, owned: true,
            chained: store.configuration.projections.contains { $0.name == LogDigestProjection.projectionName })
        return try state.withLock { state in
            guard !state.closed else {
                store.close()
                throw SyncError(.unavailable, "the sync service is closed")
            }
            if let raced = state.stores[name] { return raced }
            state.stores[name] = served
            return served
        }
    }

    /// Opens the store `name`; when that fails while creating it, removes what the attempt left,
    /// so that a later push creates the store afresh and no other request takes it for a store.
    private static func open(
        _ name: String, at path: String, creating: Bool, _ configuration: Store.Configuration
    ) throws -> Store {
        do {
            return try Store.open(at: path, configuration: configuration)
        } catch {
            if creating {
                let files = FileManager.default
                for file in ["data.mdb", "lock.mdb"] { try? files.removeItem(atPath: path + "/" + file) }
                if (try? files.contentsOfDirectory(atPath: path))?.isEmpty == true {
                    try? files.removeItem(atPath: path)
                }
            }
            if let error = error as? EventStoreError, error.code == .diskFull {
                throw SyncError(
                    .insufficientStorage,
                    "cannot \(creating ? "create" : "open") store \(name.debugDescription): the server's disk is full",
                    cause: error)
            }
            throw SyncError(.internalError, "cannot open store \(name.debugDescription)", cause: error)
        }
    }

    /// The directory of the store `name`.
    public func storePath(_ name: String) -> String {
        (configuration.dataDirectory as NSString).appendingPathComponent(name)
    }

    /// The names of the stores in the data directory and those served with ``serve(_:as:)``.
    public func storeNames() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: configuration.dataDirectory)) ?? []
        var names = Set(entries.filter { StoreName.isValid($0) && FileManager.default.fileExists(atPath: storePath($0) + "/data.mdb") })
        names.formUnion(state.withLock { Array($0.stores.keys) })
        return names.sorted()
    }

    /// Closes the stores the service opened (pending writes finish first). Later requests fail
    /// with ``SyncError/Code/unavailable``.
    public func close() {
        let owned = state.withLock { state -> [Store] in
            state.closed = true
            defer { state.stores.removeAll() }
            return state.stores.values.filter(\.owned).map(\.store)
        }
        for store in owned { store.close() }
    }

    // MARK: Epochs and digests

    static func ensureEpoch(_ store: Store, logger: Logger, name: String) async throws {
        if try store.read({ try epoch(in: $0) }) != nil { return }
        let created = try await store.write { writer -> String? in
            guard try epoch(in: writer) == nil else { return nil }
            let epoch = ReplicaID.random().description
            try writer.setMetadata(Array(epoch.utf8), forKey: epochKey)
            return epoch
        }
        if let created { logger.info("epoch created", metadata: ["store": "\(name)", "epoch": "\(created)"]) }
    }

    static func epoch(in reader: StoreReader) throws -> String? {
        try reader.metadata(forKey: epochKey).map { String(decoding: $0, as: UTF8.self) }
    }

    static func currentEpoch(in reader: StoreReader) throws -> String {
        guard let epoch = try epoch(in: reader) else {
            throw SyncError(.internalError, "the store has no epoch")
        }
        return epoch
    }

    /// The digest of the log at `seq`, or `nil` when the log is shorter.
    static func digest(at seq: UInt64, in reader: StoreReader, chained: Bool) throws -> LogDigest? {
        guard seq > 0 else { return .empty }
        if chained,
            let bytes = try reader.projectionValue(
                forKey: bigEndian(seq), projection: LogDigestProjection.projectionName,
                database: LogDigestProjection.database)
        {
            return LogDigest(rawValue: decodeBigEndian(bytes))
        }
        return try reader.event(at: seq).map { LogDigest.empty.appending($0) }
    }

    /// Whether `check` proves the log was rewound: same epoch, but the log no longer holds what
    /// the client saw at its mark.
    static func continuityBroken(_ check: ContinuityCheck?, in reader: StoreReader, chained: Bool) throws -> Bool {
        guard let check, check.seq > 0, try epoch(in: reader) == check.epoch else { return false }
        guard let digest = try digest(at: check.seq, in: reader, chained: chained) else { return true }
        return digest != check.digest
    }

    /// Starts a new epoch when `check` proves the log was rewound (read first, then a write
    /// that rotates only if the epoch is still the one checked).
    func verifyContinuity(_ check: ContinuityCheck?, of served: ServedStore, name: String, logger: Logger) async throws {
        guard let check else { return }
        let broken = try served.store.read { try SyncService.continuityBroken(check, in: $0, chained: served.chained) }
        guard broken else { return }
        let rotated = try await served.store.write { writer -> String? in
            guard try SyncService.continuityBroken(check, in: writer, chained: served.chained) else { return nil }
            return try SyncService.rotateEpoch(writer)
        }
        if let rotated { SyncService.logRotation(logger, name: name, check: check, epoch: rotated) }
    }

    static func rotateEpoch(_ writer: StoreWriter) throws -> String {
        let epoch = ReplicaID.random().description
        try writer.setMetadata(Array(epoch.utf8), forKey: epochKey)
        return epoch
    }

    static func logRotation(_ logger: Logger, name: String, check: ContinuityCheck, epoch: String) {
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
