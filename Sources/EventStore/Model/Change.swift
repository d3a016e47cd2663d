/// A local change to one item, before it is stamped and appended to the log.
///
/// ```swift
/// try await store.append([
///     .put("notes", id: "n1", fields: ["title": "Groceries", "tags": ["home"]]),
///     .patch("notes", id: "n2", fields: ["done": true]),
///     .delete("notes", id: "n3"),
/// ])
/// ```
public struct Change: Sendable, Hashable {
    /// The collection of the item.
    public var collection: String
    /// The item's id.
    public var item: String
    /// What the change does.
    public var operation: EventOperation
    /// The fields set; must be empty for deletes and non-empty for patches.
    public var fields: [String: Value]
    /// The schema version the fields are written in (see <doc:SchemaEvolution>), or `nil` (the
    /// default) for the collection's current one.
    ///
    /// Give an older version to write fields as an earlier release wrote them (an importer of
    /// that release's exports): the event is stamped with it and read through the upcasters
    /// above it. Version 0 is a collection's before it declared a schema.
    public var schema: UInt16?
    /// Edits of fields merged as add-wins sets or counters (see ``FieldEdit``); a patch may
    /// carry only edits.
    public var edits: [String: FieldEdit]
    /// The version of the item the change was made from (``Item/version`` as it was read), or
    /// `nil` for the item as the store holds it when the change is written.
    ///
    /// Give it when a change writes what was read some time before (an edit screen open while
    /// sync ran): a whole list or number written to an add-wins set or counter then keeps the
    /// additions and increments made since, rather than undoing them, and a write it overwrites
    /// unseen is recorded as a conflict.
    public var base: HLCTimestamp?

    /// Creates a change.
    public init(
        collection: String, item: String, operation: EventOperation, fields: [String: Value] = [:],
        schema: UInt16? = nil,
        edits: [String: FieldEdit] = [:], base: HLCTimestamp? = nil
    ) {
        self.collection = collection
        self.item = item
        self.operation = operation
        self.fields = fields
        self.schema = schema
        self.edits = edits
        self.base = base
    }

    /// Replaces the item with `fields` (made from the item at version `base`, when given: see
    /// ``base``).
    public static func put(
        _ collection: String, id: String, fields: [String: Value], schema: UInt16? = nil, base: HLCTimestamp? = nil
    ) -> Change {
        Change(collection: collection, item: id, operation: .put, fields: fields, schema: schema, base: base)
    }

    /// Sets `fields` on the item, keeping its other fields (made from the item at version
    /// `base`, when given: see ``base``).
    public static func patch(
        _ collection: String, id: String, fields: [String: Value], schema: UInt16? = nil, base: HLCTimestamp? = nil
    ) -> Change {
        Change(collection: collection, item: id, operation: .patch, fields: fields, schema: schema, base: base)
    }

    /// Deletes the item.
    public static func delete(_ collection: String, id: String) -> Change {
        Change(collection: collection, item: id, operation: .delete)
    }

    /// Edits fields merged as add-wins sets or counters, keeping the other fields (a patch).
    ///
    /// ```swift
    /// .edit("notes", id: "n1", ["tags": .add(["work"]), "views": .increment(by: 1)])
    /// ```
    public static func edit(_ collection: String, id: String, _ edits: [String: FieldEdit], schema: UInt16? = nil)
        -> Change
    {
        Change(collection: collection, item: id, operation: .patch, schema: schema, edits: edits)
    }

    /// Adds `delta` to a counter field (a patch).
    public static func increment(_ collection: String, id: String, field: String, by delta: Int64 = 1) -> Change {
        edit(collection, id: id, [field: .increment(by: delta)])
    }
}
