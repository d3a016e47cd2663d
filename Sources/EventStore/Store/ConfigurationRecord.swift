/// The configuration a store's projections were built with, as the store records it.
///
/// Every store keeps one record in its `meta` database (key `store.configuration`): the search
/// configuration (fields, weights, tag field), the version of the tokenizer that indexed it, the
/// custom projections it maintains, its declared indexes and its collection schemas. A new store
/// records the configuration it is created with;
/// a store made by a version without records gets one on its first writable open.
///
/// The record is what makes the store self-describing: tools open a store with
/// ``Store/SearchChange/useStored`` and rebuild, verify and replay with the store's own
/// configuration instead of the defaults, and an application that opens a store with other
/// search fields is told so (``Store/SearchChange``) instead of silently indexing new items
/// differently from old ones.
///
/// ```swift
/// let record = try store.read { try $0.configurationRecord() }
/// print(record?.search.fields(for: "tasks").map(\.name) ?? [])
/// ```
public struct ConfigurationRecord: Sendable, Hashable {
    /// The search configuration the index was built with, in canonical form
    /// (see ``SearchConfiguration/canonical``).
    public var search: SearchConfiguration
    /// The tokenizer version the index was built with. A store indexed by another version than
    /// this library's is rebuilt on its next writable open.
    public var tokenizerVersion: Int
    /// The custom projections the store maintains, ordered by name.
    public var projections: [ProjectionRecord]
    /// The declared indexes the store maintains (see ``Store/Configuration/indexes``), ordered
    /// by collection, then fields.
    public var indexes: [IndexDefinition]
    /// The collection schemas the projections were built with (see ``Store/Configuration/schemas``),
    /// ordered by collection.
    public var schemas: [SchemaRecord]

    /// Creates a record; `search` is stored in canonical form, `projections` by name,
    /// `indexes` by collection and fields, without duplicates, and `schemas` by collection.
    public init(
        search: SearchConfiguration, tokenizerVersion: Int, projections: [ProjectionRecord],
        indexes: [IndexDefinition] = [], schemas: [SchemaRecord] = []
    ) {
        self.search = search.canonical
        self.tokenizerVersion = tokenizerVersion
        self.projections = projections.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        self.indexes = IndexDefinition.canonical(indexes)
        self.schemas = schemas.sorted { $0.collection.utf8.lexicographicallyPrecedes($1.collection.utf8) }
    }

    /// The record of a store opened with `configuration` by this library.
    init(configuration: Store.Configuration) {
        self.init(
            search: configuration.search, tokenizerVersion: Tokenizer.version,
            projections: configuration.projections.map { ProjectionRecord($0) }, indexes: configuration.indexes,
            schemas: configuration.schemas.map(SchemaRecord.init))
    }

    /// Whether a store opened with `held` serves an open that declares this record: the same
    /// search configuration, indexes and schemas, and only projections it runs (at the same
    /// version). Another open of a path already open in the process gets its instance only then.
    func isMet(by held: ConfigurationRecord) -> Bool {
        search == held.search && tokenizerVersion == held.tokenizerVersion && indexes == held.indexes
            && schemas == held.schemas
            && projections.allSatisfy { wanted in
                held.projections.contains { $0.name == wanted.name && $0.version == wanted.version }
            }
    }

    /// The recorded projection named `name`.
    public func projection(named name: String) -> ProjectionRecord? {
        projections.first { $0.name == name }
    }
}

/// A custom projection as a store records it: its name, version and databases, and whether its
/// data is out of date.
///
/// A process that opens the store for writing without registering the projection (a tool such as
/// `evstore rebuild`, or another program) cannot keep its data current; it marks the projection
/// stale, and the next open that registers the projection rebuilds the projections.
public struct ProjectionRecord: Sendable, Hashable {
    /// The projection's ``Projection/name``.
    public var name: String
    /// The projection's ``Projection/version`` as last registered.
    public var version: Int
    /// The projection's ``Projection/databases``, sorted.
    public var databases: [String]
    /// Whether a process that could not run the projection opened the store for writing since
    /// the projection was last maintained: its data waits for a rebuild by a process that
    /// registers it.
    public var isStale: Bool

    /// Creates a record; `databases` are kept sorted.
    public init(name: String, version: Int, databases: [String], isStale: Bool = false) {
        self.name = name
        self.version = version
        self.databases = databases.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        self.isStale = isStale
    }

    /// The record of a registered projection (current, not stale).
    init(_ projection: any Projection) {
        self.init(name: projection.name, version: projection.version, databases: projection.databases)
    }
}

extension SearchConfiguration {
    /// The same configuration in a canonical form: each field list sorted by name (then weight),
    /// since the order of fields does not change what is indexed, and weights kept in 1…100.
    ///
    /// Two configurations index every item alike exactly when their canonical forms are equal;
    /// a store compares the opening configuration with its ``ConfigurationRecord`` this way.
    public var canonical: SearchConfiguration {
        var canonical = self
        canonical.defaultFields = SearchConfiguration.sorted(defaultFields)
        canonical.collections = collections.mapValues(SearchConfiguration.sorted)
        return canonical
    }

    private static func sorted(_ fields: [Field]) -> [Field] {
        // Through `Field.init`, which keeps weights in 1…100 like every field it creates.
        fields.map { Field(name: $0.name, weight: $0.weight) }.sorted { lhs, rhs in
            lhs.name == rhs.name ? lhs.weight < rhs.weight : lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8)
        }
    }

    /// What differs in indexing between `self` (recorded) and `other` (opening), one phrase per
    /// difference (empty when both index every item alike):
    /// `collection "tasks": recorded title×4 notes×1, opening title×3 tags×2 content×1 (the default fields)`.
    func differences(from other: SearchConfiguration) -> [String] {
        let recorded = canonical
        let opening = other.canonical
        var differences: [String] = []
        if recorded.tagField != opening.tagField {
            differences.append("tag field: recorded \"\(recorded.tagField)\", opening \"\(opening.tagField)\"")
        }
        if recorded.defaultFields != opening.defaultFields {
            differences.append(
                "default fields: recorded \(Self.describe(recorded.defaultFields)), opening \(Self.describe(opening.defaultFields))"
            )
        }
        let names = Set(recorded.collections.keys).union(opening.collections.keys).sorted()
        for name in names where recorded.fields(for: name) != opening.fields(for: name) {
            func side(_ configuration: SearchConfiguration) -> String {
                guard let fields = configuration.collections[name] else {
                    return Self.describe(configuration.defaultFields) + " (the default fields)"
                }
                return Self.describe(fields)
            }
            differences.append("collection \"\(name)\": recorded \(side(recorded)), opening \(side(opening))")
        }
        return differences
    }

    /// `title×3 tags×2`, or `none` for an empty list.
    package static func describe(_ fields: [Field]) -> String {
        fields.isEmpty ? "none" : fields.map { "\($0.name)×\($0.weight)" }.joined(separator: " ")
    }
}
