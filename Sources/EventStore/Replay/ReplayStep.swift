/// One event of an item's history and what it did to the item.
public struct ReplayStep: Sendable, Hashable {
    /// The event, as the collection's schema reads it (upcast; see <doc:SchemaEvolution>).
    public var event: Event
    /// The event as the log holds it, when the schema reads it otherwise (`nil`: as logged).
    public var original: Event?
    /// What happened to each field the event touched.
    public var changes: [FieldChange]
    /// The item after the event (`nil` when it does not exist).
    public var itemAfter: Item?
}

/// What one event did to one field.
public struct FieldChange: Sendable, Hashable {
    /// How the write fared.
    public enum Outcome: Sendable, Hashable {
        /// The field took the event's value.
        case set
        /// A `put` without the field, or a `delete`, cleared it.
        case cleared
        /// The write lost to a write with a greater stamp (the winner's event id), or to a later
        /// `put`/`delete` that had already cleared the field.
        case lost(to: EventID)
    }

    /// The field name.
    public var field: String
    /// The field's value before the event.
    public var old: Value?
    /// The field's value after the event.
    public var new: Value?
    /// How the write fared.
    public var outcome: Outcome
}

/// One write to a field in an item's history, and whether it holds the field now.
public struct FieldHistoryEntry: Sendable, Hashable {
    /// The field name.
    public var field: String
    /// The event that wrote (or cleared) the field, as the collection's schema reads it.
    public var event: Event
    /// The value written; `nil` when the event cleared the field, or updated a set or counter
    /// (see ``update``).
    public var value: Value?
    /// Whether the field's current state comes from this write.
    public var won: Bool
    /// Why the write holds the field, or what beat it, in plain words.
    public var reason: String
    /// The event as the log holds it, when the schema reads it otherwise (`nil`: as logged).
    public var original: Event? = nil
    /// The event's update of an add-wins set or counter field (`nil` for other writes).
    public var update: FieldUpdate? = nil
    /// What became of the write, by the merge's own rules (see ``Outcome``).
    public var outcome: Outcome = .won

    /// What became of one write to a field.
    public enum Outcome: Sendable, Hashable {
        /// The write holds the field (or, for a `put` without the field or a `delete`, the field
        /// is cleared by it).
        case won
        /// The next write by stamp, made after seeing this one, replaced it.
        case overwritten(by: EventID)
        /// A write made without seeing this one (a conflict, as the merge records it) has the
        /// greater stamp.
        case conflict(lostTo: EventID)
        /// A later `put` without the field, or a `delete`, cleared it.
        case cleared(by: EventID)
        /// An update of an add-wins set or counter: it takes part in the field's value as
        /// ``FieldHistoryEntry/reason`` says (additions kept or taken away, removals, increments).
        case merged

        /// `won`, `overwritten`, `conflict`, `cleared` or `merged`.
        public var name: String {
            switch self {
            case .won: "won"
            case .overwritten: "overwritten"
            case .conflict: "conflict"
            case .cleared: "cleared"
            case .merged: "merged"
            }
        }

        /// The event that beat the write, if any.
        public var beatenBy: EventID? {
            switch self {
            case .won, .merged: nil
            case .overwritten(let id), .conflict(let id), .cleared(let id): id
            }
        }
    }
}
