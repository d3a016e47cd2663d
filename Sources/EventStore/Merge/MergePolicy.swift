/// How concurrent writes to one field of an item combine.
///
/// Declared per field in a collection's schema (``CollectionSchema/merge(_:as:)``); a field
/// without a declaration is ``lastWriterWins``. Every policy is a pure function of the **set**
/// of an item's events, so replicas that received the same events hold the same item whatever
/// the order of arrival (see <doc:MergeSemantics>).
///
/// ```swift
/// var notes = CollectionSchema("notes", version: 2)
/// notes.merge("tags", as: .addWinsSet)   // two offline replicas each add a tag: both are kept
/// notes.merge("views", as: .counter)     // concurrent increments add up
/// ```
public enum MergePolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The write with the greatest stamp `(hlc, origin)` holds the field. The default.
    case lastWriterWins = "lww"
    /// A list of distinct elements where concurrent additions are all kept, and a removal takes
    /// away only the additions its writer had seen. The list is in the order elements were
    /// first added.
    case addWinsSet = "add-wins-set"
    /// An integer that concurrent increments add up on.
    case counter = "counter"

    /// `lww`, `add-wins-set` or `counter`: how the store records it and tools print it.
    public var description: String { rawValue }
}
