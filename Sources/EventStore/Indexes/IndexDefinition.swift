/// A declared index: one collection's items ordered by one or more fields, then by item id.
///
/// Declare indexes in ``Store/Configuration/indexes``; the store maintains each one in the same
/// transaction as every append, rebuilds it with the other projections and checks it in
/// ``Store/verify(progress:)``. A ``Query`` uses an index whose leading fields match its
/// equality filters, then its range filter or its sort (see <doc:Queries>).
///
/// ```swift
/// var configuration = Store.Configuration()
/// configuration.indexes = [
///     IndexDefinition("tasks", fields: ["done", "due"]),        // open tasks by due date
///     IndexDefinition("notes", fields: ["folder", "updatedAt"]), // a folder, newest first
/// ]
/// let store = try Store.open(at: path, configuration: configuration)
/// ```
///
/// Every item of the collection has one entry, also when it lacks the fields (a missing value
/// sorts first), so the index also serves `is-missing` filters. Values of any type can be
/// indexed; see ``Query`` for how values of different types order.
public struct IndexDefinition: Sendable, Hashable, CustomStringConvertible {
    /// The collection whose items the index orders.
    public var collection: String
    /// The indexed fields, most significant first.
    public var fields: [String]

    /// The most fields one index may have.
    public static let maxFields = 8

    /// Creates an index definition.
    ///
    /// - Parameters:
    ///   - collection: The collection whose items the index orders.
    ///   - fields: The indexed fields, most significant first (1 to ``maxFields``, distinct).
    public init(_ collection: String, fields: [String]) {
        self.collection = collection
        self.fields = fields
    }

    /// The index's name as messages and tools show it: `tasks(done,due)`.
    public var name: String { "\(collection)(\(fields.joined(separator: ",")))" }

    /// The index's name (see ``name``).
    public var description: String { name }

    /// The 4-byte prefix of the index's keys: a hash of the collection and the fields, so that
    /// an index keeps its keys whatever other indexes are declared.
    var id: UInt32 {
        var hash = FNV1a()
        hash.combine(bytes: collection.utf8)
        for field in fields {
            hash.combine(byte: 0)
            hash.combine(bytes: field.utf8)
        }
        return UInt32(truncatingIfNeeded: hash.state >> 32) ^ UInt32(truncatingIfNeeded: hash.state)
    }

    /// The key prefix of every entry of the index: ``id``, big-endian.
    var keyPrefix: [UInt8] { withUnsafeBytes(of: id.bigEndian, Array.init) }

    /// Throws ``EventStoreError/Code/invalidName`` unless the definition can be declared.
    func validate() throws {
        try Validation.collection(collection)
        guard !fields.isEmpty, fields.count <= IndexDefinition.maxFields else {
            throw EventStoreError(
                .invalidName, "index \(name) has \(fields.count) fields (1…\(IndexDefinition.maxFields))")
        }
        guard Set(fields).count == fields.count else {
            throw EventStoreError(.invalidName, "index \(name) names a field twice")
        }
        for field in fields {
            guard !field.isEmpty, field.utf8.count <= Validation.maxFieldNameBytes, !field.utf8.contains(0) else {
                throw EventStoreError(
                    .invalidName, "index \(name): field name \(field.debugDescription) is empty, too long or holds NUL")
            }
        }
    }

    /// Orders definitions by collection, then fields (UTF-8 bytes): the order a store records them in.
    static func precedes(_ lhs: IndexDefinition, _ rhs: IndexDefinition) -> Bool {
        if lhs.collection != rhs.collection { return utf8Less(lhs.collection, rhs.collection) }
        return lhs.fields.lexicographicallyPrecedes(rhs.fields, by: utf8Less)
    }

    /// Sorted, without duplicates: how a store records a set of definitions.
    static func canonical(_ definitions: [IndexDefinition]) -> [IndexDefinition] {
        var seen = Set<IndexDefinition>()
        return definitions.filter { seen.insert($0).inserted }.sorted(by: precedes)
    }
}
