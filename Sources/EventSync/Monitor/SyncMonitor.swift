import EventStore
public import Foundation
public import Observation

/// An observable view of a ``Synchronizer`` for an app's sync indicator: idle, syncing, up to
/// date, offline, waiting for an unmetered network, or failed with the next retry; and how many
/// items wait to be pushed (see <doc:Sync>).
///
/// ```swift
/// let monitor = SyncMonitor(synchronizer)          // starts automatic sync
/// pathMonitor.pathUpdateHandler = { path in         // NWPathMonitor
///     Task { @MainActor in
///         monitor.network = path.status != .satisfied ? .offline
///             : path.isExpensive || path.isConstrained ? .metered : .unmetered
///     }
/// }
///
/// // In a view:
/// Label(monitor.summary, systemImage: monitor.state == .offline ? "wifi.slash" : "arrow.triangle.2.circlepath")
/// Button("Sync now") { monitor.syncNow() }
/// ```
///
/// The model follows ``Synchronizer/status`` on a background task and changes its properties on
/// the main actor, only when they change. Releasing it stops following; it does not stop the
/// synchronizer.
@MainActor @Observable
public final class SyncMonitor {
    /// What sync is doing.
    public enum State: Sendable, Equatable {
        /// No sync has run yet.
        case idle
        /// Pushing or pulling; how far it has come.
        case syncing(SyncProgress)
        /// The last sync completed at this time.
        case upToDate(Date)
        /// The app reported no network; sync runs the moment it returns.
        case offline
        /// Local changes were pushed; this many server events wait for an unmetered network
        /// (``Synchronizer/Configuration/meteredPullLimit``).
        case waitingForUnmeteredNetwork(events: Int)
        /// The last sync failed; the next automatic retry is at `nextRetry` (`nil`: none
        /// planned, the error does not heal by itself — see ``SyncError/isRetryable``).
        case failed(SyncError, nextRetry: Date?)
    }

    /// The synchronizer followed.
    public let synchronizer: Synchronizer
    /// What sync is doing.
    public private(set) var state: State = .idle
    /// Items with local changes the server has not acknowledged.
    public private(set) var pendingItems = 0
    /// When a sync last completed (`nil`: not since the monitor was made).
    public private(set) var lastSynced: Date?

    /// The network as the app sees it; handed to ``Synchronizer/networkStatus``.
    public var network: NetworkStatus {
        didSet { synchronizer.networkStatus = network }
    }

    @ObservationIgnored private let task = ObservationTask()

    /// Creates a monitor of `synchronizer`.
    ///
    /// - Parameters:
    ///   - synchronizer: The synchronizer to follow.
    ///   - startsAutomaticSync: Whether to call ``Synchronizer/start()`` (the default).
    public init(_ synchronizer: Synchronizer, startsAutomaticSync: Bool = true) {
        self.synchronizer = synchronizer
        self.network = synchronizer.networkStatus
        show(synchronizer.currentStatus)
        let statuses = synchronizer.status
        // At the default priority: what a status line shows must not wait behind the app's
        // other work (at .utility, a busy process held the last status back for a minute).
        task.replace(
            with: Task.detached { [weak self] in
                for await status in statuses {
                    guard let monitor = self else { return }
                    await monitor.show(status)
                }
            })
        if startsAutomaticSync { synchronizer.start() }
    }

    /// Syncs now: asks automatic sync to run, or, when it is not running or the network is
    /// reported offline, runs one ``Synchronizer/sync()`` (a person asked for it); its outcome
    /// shows in ``state``.
    public func syncNow() {
        if synchronizer.isRunningAutomatically && network != .offline {
            synchronizer.requestSync()
        } else {
            let synchronizer = self.synchronizer
            Task.detached { _ = try? await synchronizer.sync() }
        }
    }

    /// "Up to date", "Syncing 40%", "Offline — 3 items waiting to sync", … for a status line.
    public var summary: String {
        let phase: String
        switch state {
        case .idle: phase = "Not synced yet"
        case .syncing(let progress): phase = "Syncing \(Int((progress.fractionCompleted * 100).rounded()))%"
        case .upToDate: phase = "Up to date"
        case .offline: phase = "Offline"
        case .waitingForUnmeteredNetwork: phase = "Waiting for Wi-Fi to download changes"
        case .failed(let error, let nextRetry):
            phase = "Sync failed: \(error.message)" + (nextRetry == nil ? "" : " (retrying)")
        }
        guard pendingItems > 0 else { return phase }
        return phase + " — " + (pendingItems == 1 ? "1 item waiting to sync" : "\(pendingItems) items waiting to sync")
    }

    private func show(_ status: SyncStatus) {
        let state: State
        switch status.phase {
        case .idle: state = .idle
        case .pushing(let progress), .pulling(let progress): state = .syncing(progress)
        case .upToDate(let date):
            state = .upToDate(date)
            if lastSynced != date { lastSynced = date }
        case .offline: state = .offline
        case .pullHeld(let events): state = .waitingForUnmeteredNetwork(events: events)
        case .failed(let error, let retryAt): state = .failed(error, nextRetry: retryAt)
        }
        if self.state != state { self.state = state }
        if pendingItems != status.pendingItems { pendingItems = status.pendingItems }
    }
}
