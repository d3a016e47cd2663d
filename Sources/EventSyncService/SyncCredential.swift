import EventSync

/// Who is calling a ``SyncService``: the identity that owns the replica ids it pushes under.
///
/// The first credential that pushes events under a replica id owns that id on the store; a push
/// under it by any other credential is refused (``SyncError/Code/replicaNotOwned``), and a push
/// may carry only the pushing replica's own events (``SyncError/Code/foreignOrigin``). Then no
/// holder of a store's token can append events in another replica's name, and so none can take
/// an id that the real replica will use next.
///
/// The HTTP server derives the credential from the bearer token (a SHA-256 digest of it, so
/// that no token is ever stored). Over HTTP nobody is an operator.
///
/// ```swift
/// let phone = SyncCredential(id: "user-42")
/// let transport = InProcessTransport(service: service, storeName: "notes", credential: phone)
/// ```
public struct SyncCredential: Sendable, Hashable {
    /// A stable identity that is not a secret (stored with each replica id it owns).
    public var id: String
    /// Whether the caller is an operator: its pushes may carry any replica's events (to seed a
    /// server restored from a backup from a full replica) and own no replica id.
    public var isOperator: Bool

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - id: A stable, non-secret identity, at most 200 bytes.
    ///   - isOperator: Whether pushes may carry other replicas' events.
    public init(id: String, isOperator: Bool = false) {
        self.id = id
        self.isOperator = isOperator
    }

    /// The caller in the same process that runs the service (an app serving its own store,
    /// tests): an operator.
    public static let trusted = SyncCredential(id: "", isOperator: true)
}
