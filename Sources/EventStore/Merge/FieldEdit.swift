/// An edit of a field merged as an add-wins set or a counter, as an application writes it in a
/// ``Change`` (``Change/edits``): add or remove elements, or add to a counter.
///
/// ```swift
/// try await store.append([
///     .edit("notes", id: "n1", ["tags": .add(["work"]), "views": .increment(by: 1)]),
///     .edit("notes", id: "n2", ["tags": .remove(["draft"])]),
/// ])
/// ```
///
/// Writing a whole list or number in ``Change/fields`` works too: the store turns it into the
/// additions, removals or increment that take the field from what this replica holds to what
/// was written, so a typed model's `put` merges with edits made elsewhere instead of replacing
/// them.
public struct FieldEdit: Sendable, Hashable {
    /// Elements to add to a set.
    public var add: [Value]
    /// Elements to remove from a set (the additions of them this replica holds).
    public var remove: [Value]
    /// What to add to a counter.
    public var increment: Int64?

    /// Creates an edit.
    public init(add: [Value] = [], remove: [Value] = [], increment: Int64? = nil) {
        self.add = add
        self.remove = remove
        self.increment = increment
    }

    /// Adds `elements` to a set.
    public static func add(_ elements: [Value]) -> FieldEdit { FieldEdit(add: elements) }

    /// Removes `elements` from a set.
    public static func remove(_ elements: [Value]) -> FieldEdit { FieldEdit(remove: elements) }

    /// Adds `delta` to a counter.
    public static func increment(by delta: Int64) -> FieldEdit { FieldEdit(increment: delta) }
}
