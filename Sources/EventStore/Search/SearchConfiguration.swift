/// Which fields of a collection's items are searchable, and how much each counts.
///
/// The default indexes `title` (weight 3), `tags` (weight 2) and `content` (weight 1) in every
/// collection; the `tags` field (strings) also serves tag filters.
///
/// ```swift
/// var search = SearchConfiguration()
/// search.collections["tasks"] = [.init(name: "title", weight: 4), .init(name: "notes", weight: 1)]
/// ```
///
/// A store records the configuration it is built with (``ConfigurationRecord``). Opening it for
/// writing with another one fails unless the change is declared with
/// ``Store/SearchChange/reindex``, which records it and rebuilds the projections; see
/// ``Store/Configuration/searchChange``.
public struct SearchConfiguration: Sendable, Hashable {
    /// A searchable field and its weight.
    public struct Field: Sendable, Hashable {
        /// The field name. String values are indexed; arrays index their string elements.
        public var name: String
        /// How much a match in this field counts (1…100).
        public var weight: Int

        /// Creates a searchable field.
        public init(name: String, weight: Int) {
            self.name = name
            self.weight = max(1, min(weight, 100))
        }
    }

    /// The fields indexed in collections without their own entry.
    public var defaultFields: [Field] = [
        Field(name: "title", weight: 3), Field(name: "tags", weight: 2), Field(name: "content", weight: 1),
    ]
    /// Per-collection fields, replacing ``defaultFields``; an empty list disables search there.
    public var collections: [String: [Field]] = [:]
    /// The field whose strings are tags, for tag filters.
    public var tagField: String = "tags"

    /// Creates the default configuration.
    public init() {}

    /// The searchable fields of `collection`.
    public func fields(for collection: String) -> [Field] {
        collections[collection] ?? defaultFields
    }
}
