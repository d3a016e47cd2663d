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
}
