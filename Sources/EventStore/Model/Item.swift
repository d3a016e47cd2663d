/// The current state of one item, as the items projection holds it.
public struct Item: Sendable, Hashable {
    /// The collection of the item.
    public var collection: String
    /// The item's id.
    public var id: String
    /// The item's live fields.
    public var fields: [String: Value]
    /// The greatest stamp of any event applied to the item (its version).
    public var version: HLCTimestamp

    /// Creates an item.
    public init(collection: String, id: String, fields: [String: Value], version: HLCTimestamp) {
        self.collection = collection
        self.id = id
        self.fields = fields
        self.version = version
    }

    /// The value of a field, or `nil` when the item does not have it.
    public subscript(field: String) -> Value? { fields[field] }
}
