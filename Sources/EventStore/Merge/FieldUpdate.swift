/// What an event does to a field merged as an add-wins set or a counter (see ``MergePolicy``):
/// elements added, elements removed with the additions the writer had seen of each, or an
/// increment. It travels in ``Event/updates``; the field's value is what every update of the
/// item's events adds up to.
///
/// Applications do not build these: they write ``Change``s (a whole list, a number, or a
/// ``FieldEdit``), and the store turns them into updates against what the replica holds, so
/// that a removal names exactly the additions it saw.
public struct FieldUpdate: Sendable, Hashable {
    /// The removal of one element: it takes away the additions of the element that `seen`
    /// names (the events that added it, as the writer knew them), and no other.
    public struct Removal: Sendable, Hashable {
        /// The element removed.
        public var element: Value
        /// The events whose addition of `element` the writer had seen, in ascending order.
        public var seen: [EventID]

        /// Creates a removal.
        public init(element: Value, seen: [EventID]) {
            self.element = element
            self.seen = seen
        }
    }

    /// Elements this event adds (each addition is identified by the event's id).
    public var add: [Value]
    /// Elements this event removes.
    public var remove: [Removal]
    /// What this event adds to a counter (negative to subtract).
    public var increment: Int64?

    /// Creates an update.
    public init(add: [Value] = [], remove: [Removal] = [], increment: Int64? = nil) {
        self.add = add
        self.remove = remove
        self.increment = increment
    }

    /// An update that adds `delta` to a counter.
    public static func increment(_ delta: Int64) -> FieldUpdate { FieldUpdate(increment: delta) }

    /// Whether it changes a set (rather than a counter).
    var isSetUpdate: Bool { increment == nil }

    /// The most additions a removal may name.
    static let maxSeen = 4_096
}

extension Event {
    /// Gives the additions its removals name the ids `renamed` maps them to (events moved to
    /// new ids by ``Store/restamp(from:)``).
    mutating func renameSeenAdditions(_ renamed: [EventID: EventID]) {
        guard !updates.isEmpty else { return }
        for (name, var update) in updates where !update.remove.isEmpty {
            for index in update.remove.indices {
                update.remove[index].seen = update.remove[index].seen.map { renamed[$0] ?? $0 }.sorted()
            }
            updates[name] = update
        }
    }
}
