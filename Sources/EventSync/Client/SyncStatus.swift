public import Foundation

/// How far a push or a pull has come.
public struct SyncProgress: Sendable, Hashable, CustomStringConvertible {
    /// Events done.
    public var completed: Int
    /// Events to do (an estimate: the server may grow meanwhile).
    public var total: Int

    /// Creates a progress.
    public init(completed: Int, total: Int) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, between 0 and 1.
    public var fractionCompleted: Double { total > 0 ? min(1, Double(completed) / Double(total)) : 1 }

    /// `completed/total`.
    public var description: String { "\(completed)/\(total)" }
}

/// What a ``Synchronizer`` is doing, and how many local items and events wait to be pushed.
///
/// ```swift
/// for await status in synchronizer.status {
///     switch status.phase {
///     case .failed(let error, let retryAt?): print("sync failed (\(error.message)); retry at \(retryAt)")
///     default: print(status)   // e.g. "pushing 500/1200 — 1200 items waiting to sync"
///     }
/// }
/// ```
public struct SyncStatus: Sendable, Equatable, CustomStringConvertible {
    /// The phase of the synchronizer.
    public enum Phase: Sendable, Equatable {
        /// No sync has run yet.
        case idle
        /// Pushing local events.
        case pushing(SyncProgress)
        /// Pulling the server log.
        case pulling(SyncProgress)
        /// The last sync completed at this time.
        case upToDate(Date)
        /// The last sync failed; an automatic retry is planned at `retryAt` (`nil`: none planned,
        /// the error does not heal by itself).
        case failed(SyncError, retryAt: Date?)
        /// The app reported no network (``Synchronizer/networkStatus``): automatic sync waits for
        /// it to return and syncs at once when it does.
        case offline
        /// Local events were pushed, but the server holds this many events more than
        /// ``Synchronizer/Configuration/meteredPullLimit`` allows on a metered network: the pull
        /// waits for an unmetered one.
        case pullHeld(events: Int)
    }

    /// The phase.
    public var phase: Phase
    /// Local events not yet acknowledged by the server.
    public var pendingCount: Int
    /// The distinct items those events write (a note edited 40 times offline is one item):
    /// what ``pendingDescription`` counts.
    public var pendingItems: Int

    /// Creates a status; `pendingItems` defaults to `pendingCount`.
    public init(phase: Phase, pendingCount: Int, pendingItems: Int? = nil) {
        self.phase = phase
        self.pendingCount = pendingCount
        self.pendingItems = pendingItems ?? pendingCount
    }

    /// Whether the phase is ``Phase/upToDate(_:)``.
    public var isUpToDate: Bool {
        if case .upToDate = phase { return true }
        return false
    }

    /// "N items waiting to sync" (``pendingItems``), or "everything synced".
    public var pendingDescription: String {
        switch pendingItems {
        case 0: "everything synced"
        case 1: "1 item waiting to sync"
        default: "\(pendingItems) items waiting to sync"
        }
    }

    /// The phase and the pending count, for people.
    public var description: String {
        let phase: String
        switch self.phase {
        case .idle: phase = "idle"
        case .pushing(let progress): phase = "pushing \(progress)"
        case .pulling(let progress): phase = "pulling \(progress)"
        case .upToDate: phase = "up to date"
        case .failed(let error, let retryAt):
            phase = "failed: \(error.message)" + (retryAt.map { " (retry at \($0))" } ?? "")
        case .offline: phase = "offline"
        case .pullHeld(let events): phase = "\(events) server events wait for an unmetered network"
        }
        return "\(phase) — \(pendingDescription)"
    }
}
