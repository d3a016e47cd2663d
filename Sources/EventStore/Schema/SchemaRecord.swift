/// A collection schema as a store records it (``ConfigurationRecord/schemas``): its version and
/// which versions have upcasters. Tools that open the store read it to know what they can do
/// without the application's upcasters.
public struct SchemaRecord: Sendable, Hashable {
    /// The collection.
    public var collection: String
    /// The version the store's projections were built with.
    public var version: UInt16
    /// The versions that have an upcaster, ascending.
    public var upcastVersions: [UInt16]

    /// Creates a record.
    public init(collection: String, version: UInt16, upcastVersions: [UInt16] = []) {
        self.collection = collection
        self.version = version
        self.upcastVersions = upcastVersions.sorted()
    }

    /// The record of a declared schema.
    init(_ schema: CollectionSchema) {
        self.init(collection: schema.collection, version: schema.version, upcastVersions: schema.upcastVersions)
    }
}
