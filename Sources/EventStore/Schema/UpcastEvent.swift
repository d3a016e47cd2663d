/// An event as an upcaster sees and rewrites it (see ``CollectionSchema/upcast(from:_:)``).
///
/// ```swift
/// schema.upcast(from: 0) { event in
///     event.renameField("body", to: "text")
///     if event.operation == .put, event.fields["done"] == nil { event.fields["done"] = false }
/// }
/// ```
public struct UpcastEvent: Sendable {
    /// The collection (an upcaster may move the item to another one: prefer
    /// ``move(to:atVersion:)``, which says at which version of its schema the event enters it).
    public var collection: String
    /// The item id.
    public var item: String
    /// What the event does.
    public var operation: EventOperation
    /// The fields it writes.
    public var fields: [String: Value]
    /// Its updates of add-wins sets and counters (see ``Event/updates``).
    public var updates: [String: FieldUpdate]
    /// The version the event is at while this upcaster runs.
    public internal(set) var version: UInt16
    /// The version of the target's schema the event enters at, after a move that names one.
    var entryVersion: UInt16?

    init(_ event: Event, version: UInt16) {
        collection = event.collection
        item = event.item
        operation = event.operation
        fields = event.fields
        updates = event.updates
        self.version = version
    }

    /// Moves the event's item to `collection`, where the event is read through that
    /// collection's upcasters from `version` on (see ``UpcastStep/moveToCollection(_:atVersion:)``).
    public mutating func move(to collection: String, atVersion version: UInt16) {
        self.collection = collection
        entryVersion = version
    }

    /// Renames a field when the event writes or updates it (a put that wrote `old` now writes
    /// `new`).
    public mutating func renameField(_ old: String, to new: String) {
        if let value = fields.removeValue(forKey: old) { fields[new] = value }
        if let update = updates.removeValue(forKey: old) { updates[new] = update }
    }
}
