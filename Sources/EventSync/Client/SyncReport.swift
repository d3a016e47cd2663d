public import EventStore

/// What one ``Synchronizer/sync()`` moved.
public struct SyncReport: Sendable, Hashable, CustomStringConvertible {
    /// Local events the server appended.
    public var pushed = 0
    /// Server events appended to the local log.
    public var pulled = 0
    /// Pushed events the server already held (acknowledged, not appended again).
    public var duplicates = 0
    /// Pulled events the local log already held (such as this replica's own events coming back
    /// from the server).
    public var pulledDuplicates = 0
    /// Concurrent writes revealed by pulled events (see ``EventStore/ConflictRecord``).
    public var conflicts = 0
    /// The conflict records, up to ``Synchronizer/Configuration/maxReportedConflicts``.
    public var conflictRecords: [ConflictRecord] = []
    /// Whether the server's epoch changed, or the server's log no longer held this store's mark
    /// (``SyncError/Code/unverifiedMark``): the positions were reset and everything re-synced.
    public var epochChanged = false
    /// The server head at the end.
    public var serverHead: UInt64 = 0
    /// Requests made: pushes and pulls.
    public var requests = 0
    /// Other replicas' events this store offered to relay and the server refused, because
    /// another credential owns their replica id (that replica pushes them itself).
    public var relaysRefused = 0
    /// Replica id changes: this store found that it had reused ids published elsewhere (it was
    /// restored from an older copy, or copied to another device) and moved its unpublished
    /// events to a new id (see ``EventStore/Store/restamp(from:)``).
    public var replicaChanges: [Store.ReplicaIDChange] = []
    /// Server events not pulled because the network is metered and they are more than
    /// ``Synchronizer/Configuration/meteredPullLimit`` (0: nothing was held).
    public var heldPull = 0

    /// An empty report.
    public init() {}

    /// `pushed 3, pulled 5, duplicates 0, conflicts 1`.
    public var description: String {
        var text = "pushed \(pushed), pulled \(pulled), duplicates \(duplicates), conflicts \(conflicts)"
        if epochChanged { text += " (server restored or reset: re-synced)" }
        if heldPull > 0 { text += " (\(heldPull) server events wait for an unmetered network)" }
        for change in replicaChanges {
            text += " (replica id reused elsewhere: now \(change.current), \(change.restamped.count) events restamped)"
        }
        return text
    }
}
