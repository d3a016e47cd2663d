import EventStore
import EventSync
import Foundation
import Logging
import Synchronization

/// The embedded backend: each store is an ``EventStore/Store`` in its own directory under the
/// data directory, opened on first use and kept open; pushes are appended to its log with its
/// own seqs (one writer per store, so seqs are dense and in commit order), and its items and
/// search index are maintained, so every `evstore` command works on it.
final class LMDBSyncStorage: SyncStorage {
    struct ServedStore: Sendable {
        let store: Store
        /// Whether the service opened the store (and closes it).
        let owned: Bool
        /// Whether the store keeps the log-digest chain (otherwise digests cover one event).
        let chained: Bool

        init(store: Store, owned: Bool) {
            self.store = store
            self.owned = owned
            self.chained = store.configuration.projections.contains { $0.name == LogDigestProjection.projectionName }
        }
    }

    private struct State {
        var stores: [String: ServedStore] = [:]
        /// The stores a push created whose first events are not yet appended, with the number
        /// of pushes using each. No other request sees them; when the last of those pushes ends
        /// with nothing appended, the store is removed (a refused push creates nothing).
        var provisional: [String: Int] = [:]
        var closed = false
    }

    let dataDirectory: String
    private let configuration: SyncService.Configuration
    private let state = Mutex(State())
    /// Taken, for the name's lower case, while a store is opened or registered, or the files of a
    /// store that was not created are removed, so that no open of the same store (or of a twin
    /// whose name differs only by case) runs meanwhile; stores of other names open meanwhile.
    private let opening = AsyncTurns()

    /// Creates the storage; creates the data directory when missing.
    ///
    /// - Throws: ``EventSync/SyncError`` when the data directory cannot be created.
    init(dataDirectory: String, configuration: SyncService.Configuration) throws {
        self.dataDirectory = dataDirectory
        self.configuration = configuration
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw SyncError(.internalError, "cannot create data directory \(dataDirectory)", cause: error)
        }
    }

    // MARK: Stores

    /// Serves a store this process already opened (see ``SyncService/serve(_:as:)``), under a
    /// name no other store has: not one a push is creating, nor one of the data directory, nor
    /// one another served store has (serving the same store again changes nothing).
    func serve(_ store: Store, as name: String) async throws {
        try await LMDBSyncStorage.ensureEpoch(store, logger: configuration.logger, name: name)
        let path = storePath(name)
        try await opening.withTurn(name.lowercased()) {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
            try state.withLock { state in
                guard !state.closed else { throw SyncError(.unavailable, "the sync service is closed") }
                if state.provisional[name] != nil {
                    throw SyncError(
                        .unavailable,
                        "cannot serve a store as \(name.debugDescription) yet: a push is creating that store; retry")
                }
                if let served = state.stores[name] {
                    guard served.store !== store else { return }
                    throw SyncError(
                        .invalidStoreName,
                        "cannot serve a store as \(name.debugDescription): another store is served under that name")
                }
                if FileManager.default.fileExists(atPath: path + "/data.mdb") {
                    throw SyncError(
                        .invalidStoreName,
                        "cannot serve a store as \(name.debugDescription): the data directory holds a store of that name"
                    )
                }
                let taken = entries + Array(state.stores.keys)
                if let twin = taken.first(where: { $0 != name && StoreName.sameIgnoringCase($0, name) }) {
                    throw SyncError(
                        .invalidStoreName,
                        "cannot serve a store as \(name.debugDescription): store \(twin.debugDescription) exists, and store "
                            + "names must differ by more than case")
                }
                state.stores[name] = ServedStore(store: store, owned: false)
            }
        }
    }

    /// The store `name`, opened on first use (created when `create` is set and it is missing):
    /// a store that exists from now on, whatever its first push does.
    func served(_ name: String, create: Bool) async throws -> ServedStore {
        let (served, provisional) = try await acquire(name, create: create)
        if provisional {
            let created = state.withLock { state -> Bool? in
                // A service closed meanwhile left the store to its users: this one ends its use.
                guard !state.closed else { return nil }
                return state.provisional.removeValue(forKey: name) != nil && state.stores[name]?.store === served.store
            }
            guard let created else {
                await settle(name, served)
                throw SyncError(.unavailable, "the sync service is closed")
            }
            if created { logStoreCreated(name) }
        }
        return served
    }

    /// The store `name` for a request, opened on first use. A store created for a push is
    /// provisional (`true`) until a push appends to it: the caller must ``settle(_:_:)`` it.
    private func acquire(_ name: String, create: Bool) async throws -> (ServedStore, provisional: Bool) {
        if let found = try registered(name, create: create) {
            return try await withEpoch(found, name: name)
        }
        let path = storePath(name)
        let storeConfiguration = storeConfiguration
        // In the name's turn, so that two first pushes of names that differ by case cannot both
        // pass the check, and a store created meanwhile is found registered. Only the open itself
        // runs on a thread of its own (it may rebuild the store's projections first).
        let opened = try await opening.withTurn(name.lowercased()) {
            () async throws -> (ServedStore, provisional: Bool) in
            if let found = try registered(name, create: create) { return found }
            // Names are matched exactly, as the data directory lists them: on a file system that
            // ignores case, "Notes" would otherwise open the directory of "notes". A listing that
            // fails is an error, never "no such store" (which could create one over it).
            let files = FileManager.default
            let entries: [String]
            do {
                entries = try files.contentsOfDirectory(atPath: dataDirectory)
            } catch {
                throw SyncError(.internalError, "cannot list the data directory \(dataDirectory)", cause: error)
            }
            let exists = entries.contains(name) && files.fileExists(atPath: path + "/data.mdb")
            guard exists || create else { throw SyncError(.notFound, "no store named \(name.debugDescription)") }
            if exists {
                let store = try await BlockingWork.run {
                    try LMDBSyncStorage.open(name, at: path, creating: false, storeConfiguration)
                }
                // In the turn, so that no other request holds the store when this one closes it.
                do {
                    try await LMDBSyncStorage.ensureEpoch(store, logger: configuration.logger, name: name)
                } catch {
                    store.close()
                    throw error
                }
                let served = ServedStore(store: store, owned: true)
                let registered = state.withLock { state in
                    guard !state.closed else { return false }
                    state.stores[name] = served
                    return true
                }
                guard registered else {
                    store.close()
                    throw SyncError(.unavailable, "the sync service is closed")
                }
                return (served, false)
            }
            let taken = entries + state.withLock { Array($0.stores.keys) }
            if let twin = taken.first(where: { $0 != name && StoreName.sameIgnoringCase($0, name) }) {
                // A twin that a first push is creating may yet be removed: the client retries.
                if state.withLock({ $0.provisional[twin] != nil }) {
                    throw SyncError(
                        .unavailable,
                        "cannot create store \(name.debugDescription) yet: a push is creating store "
                            + "\(twin.debugDescription), whose name differs only by case; retry")
                }
                throw SyncError(
                    .invalidStoreName,
                    "cannot create store \(name.debugDescription): store \(twin.debugDescription) exists, and store "
                        + "names must differ by more than case")
            }
            // Registered at once, as provisional: only its first push's pushes see it.
            let store = try await BlockingWork.run {
                try LMDBSyncStorage.open(name, at: path, creating: true, storeConfiguration)
            }
            let served = ServedStore(store: store, owned: true)
            let registered = state.withLock { state in
                guard !state.closed else { return false }
                state.stores[name] = served
                state.provisional[name] = 1
                return true
            }
            guard registered else {
                // Closed while the store was being created: it was never a store.
                served.store.close()
                LMDBSyncStorage.removeFiles(at: path)
                throw SyncError(.unavailable, "the sync service is closed")
            }
            return (served, true)
        }
        return try await withEpoch((opened.0, opened.provisional), name: name)
    }

    /// The store `name` when it is registered; a provisional store counts one more push using
    /// it, and is not found for any other request.
    private func registered(_ name: String, create: Bool) throws -> (ServedStore, provisional: Bool)? {
        try state.withLock { state in
            guard !state.closed else { throw SyncError(.unavailable, "the sync service is closed") }
            guard let served = state.stores[name] else { return nil }
            guard let users = state.provisional[name] else { return (served, false) }
            guard create else { throw SyncError(.notFound, "no store named \(name.debugDescription)") }
            state.provisional[name] = users + 1
            return (served, true)
        }
    }

    /// A provisional store once it has its epoch (its first push writes it; any later one reads
    /// it); the store is settled when that fails.
    private func withEpoch(_ found: (ServedStore, provisional: Bool), name: String) async throws
        -> (ServedStore, provisional: Bool)
    {
        guard found.provisional else { return found }
        do {
            try await LMDBSyncStorage.ensureEpoch(found.0.store, logger: configuration.logger, name: name)
        } catch {
            await settle(name, found.0)
            throw error
        }
        return found
    }

    /// Ends a push's use of a provisional store: it becomes a store when it holds events; the
    /// last push to leave it empty removes it, its files and its directory.
    private func settle(_ name: String, _ served: ServedStore) async {
        await opening.withTurn(name.lowercased()) {
            // Read in the turn: every push that appended before another one's settle decides has
            // committed by then (a head read before the turn could miss a push that left first).
            let appended =
                (try? served.store.read { try StoreLedger(reader: $0, chained: served.chained).head() }) != 0
            enum Outcome { case kept, created, closed, discarded }
            let outcome = state.withLock { state -> Outcome in
                guard let users = state.provisional[name], state.stores[name]?.store === served.store else {
                    return .kept
                }
                if appended && !state.closed {
                    state.provisional[name] = nil
                    return .created
                }
                if users > 1 {
                    state.provisional[name] = users - 1
                    return .kept
                }
                state.provisional[name] = nil
                state.stores[name] = nil
                // A service closed meanwhile left the store to its last push to close.
                return appended ? .closed : .discarded
            }
            switch outcome {
            case .kept: break
            case .created: logStoreCreated(name)
            case .closed:
                logStoreCreated(name)
                served.store.close()
            case .discarded:
                served.store.close()
                LMDBSyncStorage.removeFiles(at: storePath(name))
            }
        }
    }

    /// The configuration of the stores the service opens: writable, with the log digests.
    private var storeConfiguration: Store.Configuration {
        var storeConfiguration = configuration.storeConfiguration
        storeConfiguration.readOnly = false
        if !storeConfiguration.projections.contains(where: { $0.name == LogDigestProjection.projectionName }) {
            storeConfiguration.projections.append(LogDigestProjection())
        }
        return storeConfiguration
    }

    private func logStoreCreated(_ name: String) {
        configuration.logger.notice("store created", metadata: ["store": "\(name)", "path": "\(storePath(name))"])
    }

    /// Opens the store `name`; when that fails while creating it, removes what the attempt left,
    /// so that a later push creates the store afresh and no other request takes it for a store.
    private static func open(
        _ name: String, at path: String, creating: Bool, _ configuration: Store.Configuration
    ) throws -> Store {
        do {
            return try Store.open(at: path, configuration: configuration)
        } catch {
            if creating { removeFiles(at: path) }
            if let error = error as? EventStoreError, error.code == .diskFull {
                throw SyncError(
                    .insufficientStorage,
                    "cannot \(creating ? "create" : "open") store \(name.debugDescription): the server's disk is full",
                    cause: error)
            }
            throw SyncError(.internalError, "cannot open store \(name.debugDescription)", cause: error)
        }
    }

    /// Removes a store's files, and its directory when nothing else is in it.
    private static func removeFiles(at path: String) {
        let files = FileManager.default
        for file in ["data.mdb", "lock.mdb"] { try? files.removeItem(atPath: path + "/" + file) }
        if (try? files.contentsOfDirectory(atPath: path))?.isEmpty == true {
            try? files.removeItem(atPath: path)
        }
    }

    /// The directory of the store `name`.
    func storePath(_ name: String) -> String {
        (dataDirectory as NSString).appendingPathComponent(name)
    }

    func storeNames() async throws -> [String] {
        let files = FileManager.default
        let entries = (try? files.contentsOfDirectory(atPath: dataDirectory)) ?? []
        var names = Set(
            entries.filter { StoreName.isValid($0) && files.fileExists(atPath: storePath($0) + "/data.mdb") })
        let (open, provisional) = state.withLock { (Array($0.stores.keys), Set($0.provisional.keys)) }
        names.formUnion(open)
        return names.subtracting(provisional).sorted()
    }

    /// Closes the stores the service opened. A store a push is creating stays until that push
    /// ends (see ``settle(_:_:)``): it is then closed, or removed when nothing was appended, so
    /// that a push refused while the service closes leaves no store behind.
    func close() {
        let owned = state.withLock { state -> [Store] in
            state.closed = true
            let closing = state.stores.filter { $0.value.owned && state.provisional[$0.key] == nil }
            state.stores = state.stores.filter { state.provisional[$0.key] != nil }
            return closing.values.map(\.store)
        }
        for store in owned { store.close() }
    }

    // MARK: Epochs

    /// Gives `store` an epoch and its key when it has none: a new store, or (the key alone) one
    /// whose epoch predates signed marks.
    static func ensureEpoch(_ store: Store, logger: Logger, name: String) async throws {
        @Sendable func complete(_ reader: StoreReader) throws -> Bool {
            try StoreLedger.epoch(in: reader) != nil && StoreLedger.epochKey(in: reader) != nil
        }
        if try store.read(complete) { return }
        let created = try await store.write { writer -> (epoch: String, keyOnly: Bool)? in
            guard try !complete(writer) else { return nil }
            let existing = try StoreLedger.epoch(in: writer)
            let epoch = existing ?? ReplicaID.random().description
            try StoreWriterLedger.setEpoch(epoch, key: .random(), in: writer)
            return (epoch, existing != nil)
        }
        guard let created else { return }
        logger.info(
            created.keyOnly ? "epoch key created" : "epoch created",
            metadata: ["store": "\(name)", "epoch": "\(created.epoch)"])
    }

    /// Starts a new epoch when `check` proves the log was rewound (read first, then a write
    /// that rotates only if the epoch is still the one checked).
    private func verifyContinuity(_ check: ContinuityCheck?, of served: ServedStore, name: String, logger: Logger)
        async throws
    {
        guard let check else { return }
        let chained = served.chained
        let broken = try served.store.read { try StoreLedger(reader: $0, chained: chained).continuityBroken(check) }
        guard broken else { return }
        let rotated = try await served.store.write { writer -> String? in
            var ledger = StoreWriterLedger(writer: writer, chained: chained)
            guard try ledger.continuityBroken(check) else { return nil }
            let epoch = ReplicaID.random().description
            try ledger.setEpoch(epoch, key: .random())
            return epoch
        }
        if let rotated { SyncService.logRotation(logger, name: name, check: check, epoch: rotated) }
    }

    // MARK: Requests

    func info(_ name: String, check: ContinuityCheck?, replica: ReplicaID?, logger: Logger) async throws -> RemoteInfo {
        let served = try await served(name, create: false)
        try await verifyContinuity(check, of: served, name: name, logger: logger)
        let limits = configuration.limits
        let chained = served.chained
        return try served.store.read { reader in
            let ledger = StoreLedger(reader: reader, chained: chained)
            let mark = try ledger.headMark()
            return RemoteInfo(
                store: name, head: mark.head, epoch: mark.epoch, digest: mark.digest, limits: limits,
                replicaHighWater: try replica.map { try ledger.highWater(of: $0) }, signature: mark.signature)
        }
    }

    func push(_ name: String, _ push: CheckedPush, create: Bool, logger: Logger) async throws -> PushOutcome {
        let (served, provisional) = try await acquire(name, create: create)
        let chained = served.chained
        let outcome: Result<PushOutcome, any Error>
        do {
            // A store an app serves writes under its own ids: no peer may push new events under them.
            let host = served.owned ? [] : try served.store.ownReplicaIDs()
            outcome = .success(
                try await served.store.write { writer in
                    var ledger = StoreWriterLedger(writer: writer, chained: chained, hostReplicas: host)
                    return try ledger.apply(push)
                })
        } catch {
            outcome = .failure(error)
        }
        if provisional { await settle(name, served) }
        return try outcome.get()
    }

    func page(_ name: String, _ request: PageRequest, logger: Logger) async throws -> EncodedPage {
        let served = try await served(name, create: false)
        try await verifyContinuity(request.check, of: served, name: name, logger: logger)
        if request.wait > .zero {
            await LMDBSyncStorage.waitForEvents(in: served.store, for: request)
        }
        let chained = served.chained
        return try served.store.read { reader in
            let ledger = StoreLedger(reader: reader, chained: chained)
            let head = try ledger.head()
            var builder = PageBuilder(request, head: head, epoch: try ledger.epoch())
            if request.after < head {
                try reader.forEachEvent(from: request.after + 1) { builder.add($0) }
            }
            return builder.finish(digest: try ledger.digest(at: builder.page.next), key: try ledger.epochKey())
        }
    }
}
