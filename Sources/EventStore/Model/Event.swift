/// The globally unique identity of an event: the replica that wrote it and its sequence number
/// there. Appending an event whose id is already in the log is a no-op ("duplicate").
public struct EventID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The replica that wrote the event.
    public var origin: ReplicaID
    /// The event's position in its origin's own writes (1, 2, 3, …).
    public var sequence: UInt64

    /// Creates an event id.
    public init(origin: ReplicaID, sequence: UInt64) {
        self.origin = origin
        self.sequence = sequence
    }

    /// `origin/sequence`.
    public var description: String { "\(origin)/\(sequence)" }

    /// Parses `origin/sequence` (32 hex digits, a slash, a decimal sequence).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let origin = ReplicaID(hex: String(parts[0])),
            parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let sequence = UInt64(parts[1])
        else { return nil }
        self.init(origin: origin, sequence: sequence)
    }

    /// Orders by origin, then sequence.
    public static func < (lhs: EventID, rhs: EventID) -> Bool {
        lhs.origin != rhs.origin ? lhs.origin < rhs.origin : lhs.sequence < rhs.sequence
    }
}

/// What an event does to its item.
public enum EventOperation: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Replace the item: set the named fields, clear every other field.
    case put = 1
    /// Set the named fields, keep the others.
    case patch = 2
    /// Delete the item (a tombstone at the event's stamp).
    case delete = 3

    /// `put`, `patch` or `delete`.
    public var description: String {
        switch self {
        case .put: "put"
        case .patch: "patch"
        case .delete: "delete"
        }
    }

    /// Parses `put`, `patch` or `delete`.
    public init?(name: String) {
        guard let match = EventOperation.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

/// One entry of the event log: a change to one item, stamped and identified.
///
/// Local writes become events through ``Store/append(_:)``; events from other replicas enter
/// through ``Store/ingest(_:)`` with their identity and stamp kept.
public struct Event: Sendable, Hashable {
    /// The position in this store's log (1, 2, 3, …); `0` for an event not read from a log.
    public var seq: UInt64
    /// The event's global identity.
    public var id: EventID
    /// When the event was written, on its origin's hybrid logical clock.
    public var hlc: HLCTimestamp
    /// The item version the writer had seen: the greatest stamp of the item at its origin when
    /// the event was written. Writes newer than `base` that this event overwrites are concurrent
    /// with it and are recorded as conflicts.
    public var base: HLCTimestamp
    /// The collection of the item.
    public var collection: String
    /// The item's id within the collection.
    public var item: String
    /// What the event does.
    public var operation: EventOperation
    /// The fields set (for ``EventOperation/put`` and ``EventOperation/patch``); empty for deletes.
    public var fields: [String: Value]
    /// The application's schema version for the fields.
    public var schema: UInt16
    /// What the event does to fields merged as add-wins sets or counters (see ``MergePolicy``);
    /// empty for most events. A delete may carry updates: the removals and decrements that take
    /// such fields to empty on the replica that deleted the item.
    public var updates: [String: FieldUpdate]

    /// Creates an event.
    public init(
        seq: UInt64 = 0, id: EventID, hlc: HLCTimestamp, base: HLCTimestamp = .zero, collection: String,
        item: String, operation: EventOperation, fields: [String: Value] = [:], schema: UInt16 = 0,
        updates: [String: FieldUpdate] = [:]
    ) {
        self.seq = seq
        self.id = id
        self.hlc = hlc
        self.base = base
        self.collection = collection
        self.item = item
        self.operation = operation
        self.fields = fields
        self.schema = schema
        self.updates = updates
    }

    /// The event's place in the total order of writes.
    public var stamp: Stamp { Stamp(hlc: hlc, origin: id.origin) }
}
