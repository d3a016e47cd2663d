public import EventStore
import Foundation
public import Logging
import Synchronization

/// Syncs a local store with one remote store: pushes the local events the server has not
/// acknowledged, then pulls the server log until its head.
///
/// ```swift
/// let store = try Store.open(at: path)
/// let transport = HTTPTransport(baseURL: "http://127.0.0.1:8080", token: "t0k3n", storeName: "notes")
/// let synchronizer = Synchronizer(store: store, transport: transport)
/// let report = try await synchronizer.sync()
/// print(report)   // pushed 3, pulled 12, duplicates 0, conflicts 1
/// ```
///
/// **Cursors.** Where the replica stands (``SyncCursor``) is kept in the store's metadata and
/// advances in the same transaction as the events it covers: a pulled page is ingested and the
/// pulled cursor moves in one commit; the pushed cursor moves once the server acknowledged a
/// page. A sync cut at any point resumes from the last complete page, and never re-applies or
/// skips an event (ingest is idempotent by event id in any case).
///
/// **Merge.** Pulled events are ingested like ``EventStore/StoreWriter/ingest(_:)`` does (their
/// stamps may be up to ``Configuration/maxPulledClockSkew`` ahead of this device's clock): the
/// same merge as local events, so replicas with the same events hold the same items and search
/// index.
///
/// **Epochs.** When the server's epoch changes (its data was restored from an older copy), the
/// cursors are reset: everything local is pushed again (the server acknowledges what it holds
/// as duplicates) and the server log is pulled again. Local events are never dropped.
///
/// **Status and retries.** ``status`` streams what the synchronizer does and how many local
/// events wait; ``start()`` syncs automatically on local changes and periodically, retrying
/// failures with exponential backoff and jitter (``RetryPolicy``).
///
/// Syncs of one synchronizer never overlap: a ``sync()`` called while one runs waits for it and
/// then runs (calls made meanwhile share that next run). Use one synchronizer per store and
/// remote.
public final class Synchronizer: Sendable {
    /// How a synchronizer pages, retries and logs.
    public struct Configuration: Sendable {
        /// The most events per push (also capped by the server's limit).
        public var pushPageSize = 500
        /// The most bytes of JSON per push (also capped by the server's limit).
        public var maxPushBytes = 4 << 20
        /// The most events per pulled page (also capped by the server's limit).
        public var pullPageSize = 1000
        /// When pulling a backlog, consecutive pages are ingested in one transaction while the
        /// encoded events they hold fit in this many bytes (a transaction takes at least one
        /// page): a busy page of the search index is then written once per transaction instead
        /// of once per page, so a first sync of a large log runs several times faster. Each
        /// transaction still advances the cursor with the events it holds; `1` ingests page by
        /// page.
        ///
        /// The budget bounds memory: LMDB keeps a transaction's dirty pages in memory until it
        /// commits, and they follow the bytes the transaction ingests; the pages fetched ahead of
        /// the transaction being ingested hold at most one more budget (and a page). The default,
        /// 1.5 MiB (about six pulled pages of 1,000 events of about 250 bytes), keeps a first sync
        /// of a million such events with the search index well under 150 MiB of anonymous memory
        /// while it writes fewer pages than smaller commits. Measured at 1M: 1 MiB took 48.2 s,
        /// wrote 5.58 KiB per event and peaked at 75 MiB; 1.5 MiB 42.3 s, 5.11 KiB, 111 MiB;
        /// 2 MiB 40.9 s, 4.88 KiB, 135 MiB.
        public var pullBytesPerCommit = 3 << 19
        /// Automatic mode: how retries back off.
        public var retry = RetryPolicy()
        /// Automatic mode: how often to sync when nothing happens (`nil`: only on local changes
        /// and ``Synchronizer/requestSync()``).
        public var pollInterval: Duration? = .seconds(30)
        /// Automatic mode: how long each live pull waits on the server for other replicas'
        /// changes (at most ``SyncLimits/maxPullWait``). While automatic sync runs, one pull at
        /// a time waits on the server; when events arrive there, a sync runs at once, so a change
        /// pushed by one replica reaches the others within moments instead of at the next poll.
        /// Used only with transports that wait (``SyncTransport/supportsLivePull``); `nil`: poll
        /// only (``pollInterval``).
        public var livePullWait: Duration? = .seconds(25)
        /// The most server events a sync pulls while ``Synchronizer/networkStatus`` is
        /// ``NetworkStatus/metered``: a larger backlog (a first sync, a long time away) waits for
        /// an unmetered network, shown as ``SyncStatus/Phase/pullHeld(events:)``, while local
        /// events are still pushed. `nil` (the default): pulls never wait.
        public var meteredPullLimit: Int?
        /// How long the server may go without hearing how far this store holds its current
        /// replica id (``PushRequest/through``). Every push of the store's own events declares
        /// it; a sync with nothing of its own to push declares it alone (a push of no events)
        /// once this long has passed since the last declaration in the server's epoch — and, for
        /// an id the store left, once per epoch. A peer's relay of a write this store made and
        /// then lost (a restored device) waits on the server until such a declaration shows the
        /// store no longer holds it (``SyncError/Code/orphanedEvent``), so this bounds that wait
        /// while the store is idle; a store that writes declares with every push anyway.
        public var declarationInterval: Duration = .seconds(600)
        /// How far ahead of this device's clock a pulled event's stamp may be (a day by default;
        /// the store's own bound, ``EventStore/Store/Configuration/maxClockSkewMilliseconds``,
        /// when that is larger). The server took the stamps against its own clock, within its
        /// skew bound: this wider bound lets a device whose clock is behind receive what others
        /// wrote (its clock then moves up to their stamps), while a remote whose clock ran
        /// further ahead still cannot drag this store's clock with it.
        public var maxPulledClockSkew: Duration = .seconds(86_400)
        /// The most conflict records a ``SyncReport`` carries (all are counted).
        public var maxReportedConflicts = 1000
        /// The logger.
        public var logger = Logger(label: "eventstore.sync", factory: { _ in SwiftLogNoOpLogHandler() })

        /// Creates the default configuration.
        public init() {}
    }

    /// The local store.
    public let store: Store
    /// How the remote is reached.
    public let transport: any SyncTransport
    /// The name of the remote: names the cursor (`sync.remote.<name>` in the store's metadata).
    public let remoteName: String
    /// The configuration.
    public let configuration: Configuration

    let cursorKey: String
    let broadcaster: StatusBroadcaster
    let wakeup = Wakeup()
    /// Signalled when ``networkStatus`` changes: cuts a retry's wait short.
    let networkChanged = Wakeup()
    /// The same for the live-pull listener (a wake-up wakes the waiters of the moment, so each
    /// waiting task has its own).
    let listenerNetworkChanged = Wakeup()
    let automatic = Mutex(AutomaticState())
    let network = Mutex(NetworkStatus.unknown)
    let pendingItems = Mutex(PendingItems())

    struct AutomaticState {
        var task: Task<Void, Never>?
        /// Consecutive failed syncs.
        var failures = 0
        /// The wait before the automatic retry of the last failure.
        var retryDelay: Duration?
    }
    private let queue = Mutex(RunQueue())

    private struct RunQueue {
        var tail: Task<SyncReport, any Error>?
        var tailStarted = true
    }

    /// Creates a synchronizer.
    ///
    /// - Parameters:
    ///   - store: The local store.
    ///   - transport: How the remote is reached.
    ///   - remoteName: The cursor's name; defaults to the transport's
    ///     ``SyncTransport/remoteIdentifier``.
    ///   - configuration: Paging, retries and logging.
    public init(
        store: Store, transport: any SyncTransport, remoteName: String? = nil, configuration: Configuration = .init()
    ) {
        self.store = store
        self.transport = transport
        self.remoteName = remoteName ?? transport.remoteIdentifier
        self.configuration = configuration
        self.cursorKey = SyncCursor.key(for: self.remoteName)
        self.broadcaster = StatusBroadcaster(SyncStatus(phase: .idle, pendingCount: 0))
        if let pending = try? pending() {
            broadcaster.publish(SyncStatus(phase: .idle, pendingCount: pending.events, pendingItems: pending.items))
        }
    }

    deinit {
        automatic.withLock { $0.task?.cancel() }
    }

    // MARK: State

    /// The replica's cursor for this remote.
    public func cursor() throws -> SyncCursor {
        try store.read { try SyncCursor.load($0, key: cursorKey) }
    }

    /// The number of local events the server has not acknowledged.
    public func pendingCount() throws -> Int {
        try Synchronizer.pendingCount(store: store, key: cursorKey)
    }

    /// The number of distinct items those events write: what "N items waiting to sync" counts.
    /// The first call reads the pending events; later calls read only the events appended since.
    public func pendingItemCount() throws -> Int {
        try pending().items
    }

    /// The pending events and items, on one snapshot.
    func pending() throws -> (events: Int, items: Int) {
        let key = cursorKey
        return try store.read { reader in
            let head = try reader.head()
            let cursor = try SyncCursor.load(reader, key: key)
            let items = try pendingItems.withLock { try $0.count(reader, cursor: cursor) }
            return (Int(head - min(cursor.pushed, head)) + cursor.deferredRelays.count, items)
        }
    }

    static func pendingCount(store: Store, key: String) throws -> Int {
        try store.read { reader in
            let head = try reader.head()
            let cursor = try SyncCursor.load(reader, key: key)
            return Int(head - min(cursor.pushed, head)) + cursor.deferredRelays.count
        }
    }

    /// The states of the synchronizer: the current one first, then every change.
    ///
    /// Each access gives a new stream; it ends when the synchronizer is released.
    public var status: AsyncStream<SyncStatus> { broadcaster.subscribe() }

    /// The current state.
    public var currentStatus: SyncStatus { broadcaster.current }

    // MARK: Sync

    /// Runs one sync: push pending local events page by page, then pull pages until the
    /// server's head.
    ///
    /// - Returns: What moved.
    /// - Throws: ``SyncError`` (the cursors keep every completed page).
    @discardableResult
    public func sync() async throws -> SyncReport {
        let task = queue.withLock { queue -> Task<SyncReport, any Error> in
            if let tail = queue.tail, !queue.tailStarted { return tail }
            let previous = queue.tail
            let task = Task<SyncReport, any Error> {
                _ = await previous?.result
                self.queue.withLock { $0.tailStarted = true }
                return try await self.runReportingStatus()
            }
            queue.tail = task
            queue.tailStarted = false
            return task
        }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    private func runReportingStatus() async throws -> SyncReport {
        do {
            let report = try await run()
            automatic.withLock { $0.failures = 0 }
            publish(report.heldPull > 0 ? .pullHeld(events: report.heldPull) : .upToDate(Date()))
            return report
        } catch {
            let failure = Synchronizer.syncError(error)
            let policy = configuration.retry
            let delay = automatic.withLock { state -> Duration? in
                state.failures += 1
                guard state.task != nil, failure.isRetryable else {
                    state.retryDelay = nil
                    return nil
                }
                let delay = policy.delay(afterFailures: state.failures, random: Double.random(in: 0..<1))
                state.retryDelay = delay
                return delay
            }
            let retryAt = delay.map {
                Date().addingTimeInterval($0.inSeconds)
            }
            publish(.failed(failure, retryAt: retryAt))
            configuration.logger.warning("sync failed", metadata: ["remote": "\(remoteName)", "error": "\(failure)"])
            throw failure
        }
    }

    func publish(_ phase: SyncStatus.Phase) {
        let current = broadcaster.current
        let pending = (try? pending()) ?? (events: current.pendingCount, items: current.pendingItems)
        broadcaster.publish(SyncStatus(phase: phase, pendingCount: pending.events, pendingItems: pending.items))
    }

    /// Publishes the current phase again with fresh pending counts (after a local commit).
    func refreshPending() {
        guard let pending = try? pending() else { return }
        broadcaster.publishPending(events: pending.events, items: pending.items)
    }

    enum PhaseOutcome {
        case done
        case epochChanged
    }

    private func run() async throws -> SyncReport {
        var report = SyncReport()
        // Each pass may end in a new epoch or a new replica id; every such change is durable
        // progress, so a handful of passes settles even several of them.
        for _ in 0..<32 {
            try Task.checkCancellation()
            var cursor = try cursor()
            var info: RemoteInfo?
            let identity = try store.currentIdentity()
            do {
                info = try await transport.info(check: cursor.check, replica: identity.replica)
            } catch SyncError.Code.notFound {
                info = nil
                // The remote store is gone although this replica synced with it: the server was
                // restored from a copy older than the store. Like a new epoch: push everything.
                if cursor.epoch != nil { cursor = try await forgetRemote(report: &report) }
            } catch SyncError.Code.unverifiedMark {
                try await forgetPositions(report: &report)
                continue
            }
            if let info, cursor.epoch != info.epoch {
                cursor = try await adopt(epoch: info.epoch, report: &report)
            }
            report.serverHead = info?.head ?? 0
            if let published = info?.replicaHighWater, published > identity.originSequence {
                // The server holds more of this replica's events than the store: restored from
                // an older copy, or a second copy wrote under the same id. Leave the id.
                try await leaveReplicaID(
                    from: EventID(origin: identity.replica, sequence: identity.originSequence + 1),
                    reason: "the server holds events of this replica that the store does not", report: &report)
                continue
            }
            do {
                if case .epochChanged = try await pushAll(&cursor, info: info, report: &report) { continue }
                guard cursor.epoch != nil else { return report }  // no remote store and nothing pushed
                if let info, let held = heldPull(serverHead: info.head, pulled: cursor.pulled) {
                    report.heldPull = held
                    return report
                }
                if case .epochChanged = try await pullAll(&cursor, info: info, report: &report) { continue }
            } catch SyncError.Code.unverifiedMark {
                // The server's log does not continue what this store saw, and the server did not
                // sign the mark that shows it: sync everything again, as after a new epoch.
                try await forgetPositions(report: &report)
                continue
            } catch let error as SyncError where error.code == .clockSkew {
                // This store's events stamped while its device's clock ran ahead: stamped anew
                // below the server's bound, if the clock is right again.
                try await restampAhead(after: error, report: &report)
                continue
            } catch let error as SyncError
                where error.code == .eventConflict || error.code == .replicaNotOwned || error.code == .orphanedEvent
            {
                guard let id = error.eventID else { throw error }
                if try store.ownReplicaIDs().contains(id.origin) {
                    try await leaveReplicaID(from: id, reason: error.message, report: &report)
                } else if error.code == .eventConflict || error.code == .orphanedEvent {
                    // Another replica's event that the remote holds as another event, or that its
                    // owner no longer has: keep this store's copy of the write under an id of its own.
                    try await adoptConflicting(id, reason: error.message, report: &report)
                } else {
                    throw error
                }
                continue
            }
            configuration.logger.debug(
                "sync done", metadata: ["remote": "\(remoteName)", "report": "\(report)"])
            return report
        }
        throw SyncError(
            .local,
            "the sync stopped after 32 passes that each changed the server's epoch or moved events to new ids; "
                + "the next sync goes on from there")
    }
}
