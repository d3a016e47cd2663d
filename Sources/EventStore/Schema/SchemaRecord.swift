/// A collection schema as a store records it (``ConfigurationRecord/schemas``): its version and
/// its upcasters (their steps, or that they are code). Tools that open the store run the
/// recorded steps, so they read old events as the application does.
public struct SchemaRecord: Sendable, Hashable {
    /// A recorded upcaster.
    public enum Upcaster: Sendable, Hashable {
        /// Declarative steps (see ``UpcastStep``).
        case steps([UpcastStep])
        /// Code that only the application has.
        case custom
    }

    /// The collection.
    public var collection: String
    /// The version the store's projections were built with.
    public var version: UInt16
    /// The upcasters by the version they read.
    public var upcasters: [UInt16: Upcaster]
    /// The fields merged otherwise than last writer wins, with their policies.
    public var mergePolicies: [String: MergePolicy]

    /// Creates a record.
    public init(
        collection: String, version: UInt16, upcasters: [UInt16: Upcaster] = [:],
        mergePolicies: [String: MergePolicy] = [:]
    ) {
        self.collection = collection
        self.version = version
        self.upcasters = upcasters
        self.mergePolicies = mergePolicies.filter { $0.value != .lastWriterWins }
    }

    /// The record of a declared schema.
    init(_ schema: CollectionSchema) {
        self.init(
            collection: schema.collection, version: schema.version, upcasters: schema.upcasters.mapValues(\.recorded),
            mergePolicies: schema.mergePolicies)
    }

    /// The versions that have an upcaster, ascending.
    public var upcastVersions: [UInt16] { upcasters.keys.sorted() }

    /// Whether a step moves events to another collection at a named version (recorded in
    /// configuration record format 5).
    var hasVersionedMoves: Bool {
        upcasters.values.contains { upcaster in
            guard case .steps(let steps) = upcaster else { return false }
            return steps.contains { if case .moveToCollection(_, _?) = $0 { true } else { false } }
        }
    }

    /// Whether an upcaster is code, which tools cannot run.
    public var hasCustomUpcasters: Bool { upcasters.values.contains(.custom) }

    /// The schema the record describes, when every upcaster is declarative (what a tool runs).
    var declarative: CollectionSchema? { hasCustomUpcasters ? nil : runnable }

    /// The schema with the recorded steps (an upcaster in code is left out).
    var runnable: CollectionSchema {
        var schema = CollectionSchema(collection, version: version)
        for (field, policy) in mergePolicies { schema.merge(field, as: policy) }
        for (from, upcaster) in upcasters {
            if case .steps(let steps) = upcaster { schema.upcast(from: from, steps) }
        }
        return schema
    }
}
