public import EventStore

/// How a ``Synchronizer`` reaches a sync server: the three operations of protocol v1.
///
/// ``HTTPTransport`` speaks HTTP/JSON to a remote server; `InProcessTransport` (module
/// `EventSyncService`) calls a sync service in the same process (tests, peer-to-peer). Both have the same semantics:
/// errors are ``SyncError``s with the protocol's codes.
///
/// A custom transport (say, one that fails on purpose in tests) wraps another:
///
/// ```swift
/// struct CountingTransport: SyncTransport {
///     let base: any SyncTransport
///     var remoteIdentifier: String { base.remoteIdentifier }
///     func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
///         try await base.info(check: check, replica: replica)
///     }
///     func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
///         try await base.push(request, check: check)
///     }
///     func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
///         try await base.pull(after: after, limit: limit, check: check)
///     }
/// }
/// ```
public protocol SyncTransport: Sendable {
    /// A stable identity of the remote store (such as its URL): the default name of the sync
    /// cursor kept in the local store.
    var remoteIdentifier: String { get }

    /// The remote store's head, epoch, digest and limits; with `replica`, also the highest
    /// origin sequence of that replica's events the remote holds.
    ///
    /// - Throws: ``SyncError``; ``SyncError/Code/notFound`` when the store does not exist yet.
    func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo

    /// Pushes a batch of events (atomic and idempotent on the server).
    func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse

    /// Pulls the page of the server log after `after`, at most `limit` events.
    func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage

    /// A live pull: like ``pull(after:limit:check:)``, but when the server log has nothing
    /// after `after`, the server waits up to `wait` (at most ``SyncLimits/maxPullWait``) for
    /// an event before answering. Automatic sync uses it to learn of other replicas' changes
    /// within moments (see ``Synchronizer/Configuration/livePullWait``).
    ///
    /// The default implementation answers at once (a transport that cannot wait); automatic
    /// sync then falls back to polling.
    func pull(after: UInt64, limit: Int, check: ContinuityCheck?, wait: Duration) async throws -> PullPage

    /// Whether ``pull(after:limit:check:wait:)`` waits on the remote (`false` by default):
    /// automatic sync listens for remote changes only through transports that do.
    var supportsLivePull: Bool { get }
}

extension SyncTransport {
    /// `false`: the transport answers pulls at once.
    public var supportsLivePull: Bool { false }

    /// Answers at once: ``pull(after:limit:check:)``.
    public func pull(after: UInt64, limit: Int, check: ContinuityCheck?, wait: Duration) async throws -> PullPage {
        try await pull(after: after, limit: limit, check: check)
    }
}
