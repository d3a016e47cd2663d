/// Two different events under one ``EventID``: the cause of an
/// ``EventStoreError/Code/eventConflict``.
///
/// It happens when a replica reused ids it had already published — a store restored from an
/// older backup, or copied to a second device — or when a client forged another replica's id.
/// The event already held is kept; the received one is refused. A sync client that finds its
/// own id in a conflict moves its unpublished events to a new replica id (see
/// ``Store/restamp(from:)``).
///
/// ```swift
/// catch let error as EventStoreError where error.code == .eventConflict {
///     let conflict = error.cause as! EventIDConflict
///     print(conflict.id, conflict.held, conflict.received)
/// }
/// ```
public struct EventIDConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The id both events carry.
    public var id: EventID
    /// The digest of the event the log holds.
    public var held: EventDigest
    /// The digest of the event received.
    public var received: EventDigest

    /// Creates a conflict record.
    public init(id: EventID, held: EventDigest, received: EventDigest) {
        self.id = id
        self.held = held
        self.received = received
    }

    /// `event ORIGIN/SEQ: held DIGEST, received DIGEST`.
    public var description: String { "event \(id): held \(held), received \(received)" }
}

extension EventStoreError {
    /// The error for a received event whose id the log holds with other content.
    static func conflict(_ conflict: EventIDConflict) -> EventStoreError {
        EventStoreError(
            .eventConflict,
            "event id \(conflict.id) already names another event (held \(conflict.held), received \(conflict.received)): "
                + "the same id with other content is refused, never counted as a duplicate",
            cause: conflict)
    }

    /// The id conflict behind this error, when it is an ``Code/eventConflict``.
    public var eventIDConflict: EventIDConflict? { cause as? EventIDConflict }
}
