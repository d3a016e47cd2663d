/// Everything an application declares about one collection, in one place: the current schema
/// version, the upcasters that bring an event written at an older version up to it, the
/// defaults that typed models decode for fields an item lacks, how each field merges, which
/// fields are searchable and which are indexed.
///
/// ```swift
/// var notes = CollectionSchema("notes", version: 3, defaults: ["done": false])
/// notes.upcast(from: 1) { $0.renameField("title", to: "name") }      // 1 → 2
/// notes.upcast(from: 2) { event in                                    // 2 → 3: priority was text
///     if case .string(let text)? = event.fields["priority"] { event.fields["priority"] = .int(text == "high" ? 2 : 1) }
/// }
/// notes.merge("tags", as: .addWinsSet)                                // concurrent tag additions all stay
/// notes.searchFields = [.init(name: "name", weight: 3), .init(name: "body", weight: 1)]
/// notes.indexes = [["folder", "updatedAt"]]
/// var configuration = Store.Configuration()
/// configuration.schemas = [notes]
/// ```
///
/// A store stamps each event it appends with its collection's version, and interprets every
/// event through the upcasters from the event's version to the current one — when it applies an
/// append or a received event, rebuilds, verifies and replays — while the log keeps the event as
/// it was written. The store records each collection's version and upcasters; raising the
/// version rebuilds the projections on the next open (see <doc:SchemaEvolution>).
public struct CollectionSchema: Sendable {
    /// The collection.
    public var collection: String
    /// The version this application writes (0: the version of events written without a schema).
    public var version: UInt16
    /// The values typed models decode for fields an item lacks (a field added in a later version).
    public var defaults: [String: Value]
    /// The upcasters by the version they read (each brings an event from that version to the next).
    public private(set) var upcasters: [UInt16: Upcaster] = [:]
    /// The fields merged otherwise than last writer wins (see ``merge(_:as:)``).
    public private(set) var mergePolicies: [String: MergePolicy] = [:]
    /// The collection's searchable fields and weights (`nil`: those of
    /// ``Store/Configuration/search`` for collections without their own; `[]`: no search).
    public var searchFields: [SearchConfiguration.Field]?
    /// The collection's declared indexes, each as its fields, most significant first (see
    /// ``IndexDefinition``).
    public var indexes: [[String]] = []

    /// Declares a collection's schema.
    ///
    /// - Parameters:
    ///   - collection: The collection's name.
    ///   - version: The version this application writes.
    ///   - defaults: The values typed models decode for missing fields.
    public init(_ collection: String, version: UInt16 = 0, defaults: [String: Value] = [:]) {
        self.collection = collection
        self.version = version
        self.defaults = defaults
    }

    /// Registers the upcaster from `version` to `version + 1` as declarative steps, which the
    /// store records: every tool then reads old events as the application does. Prefer this form.
    ///
    /// - Parameters:
    ///   - version: The version the upcaster reads, below ``version``.
    ///   - steps: The changes, applied in order.
    public mutating func upcast(from version: UInt16, _ steps: [UpcastStep]) {
        upcasters[version] = Upcaster(steps: steps, custom: nil)
    }

    /// Registers the upcaster from `version` to `version + 1` as code: a pure function of the
    /// event (no clock, no randomness, no reads), since every replica and every rebuild must
    /// derive the same items from the same log. The store records only that it exists, so
    /// tools refuse what would need it (a rebuild, a verify, a replay of such events).
    ///
    /// - Parameters:
    ///   - version: The version the upcaster reads, below ``version``.
    ///   - transform: Rewrites the event's fields, operation, item or collection.
    public mutating func upcast(from version: UInt16, _ transform: @escaping @Sendable (inout UpcastEvent) -> Void) {
        upcasters[version] = Upcaster(steps: [], custom: transform)
    }

    /// The versions that have an upcaster, ascending.
    public var upcastVersions: [UInt16] { upcasters.keys.sorted() }

    /// Declares how `field` merges concurrent writes (see ``MergePolicy``).
    ///
    /// The policy decides how this application's writes to the field become events (additions,
    /// removals, increments); items do not depend on it, so declaring or changing one rebuilds
    /// nothing. The store records it, so that tools write as the application does. Typed models
    /// decode a set field an item lacks as `[]` and a counter as `0`.
    ///
    /// - Parameters:
    ///   - field: The field's name.
    ///   - policy: How it merges.
    public mutating func merge(_ field: String, as policy: MergePolicy) {
        mergePolicies[field] = policy == .lastWriterWins ? nil : policy
    }

    /// The defaults typed models decode: ``defaults``, and `[]` for a set field and `0` for a
    /// counter that neither they nor the item give a value.
    var decodingDefaults: [String: Value] {
        var values = defaults
        for (field, policy) in mergePolicies where values[field] == nil {
            values[field] = policy == .counter ? .int(0) : .array([])
        }
        return values
    }

    /// A version's upcaster: declarative steps, or code.
    public struct Upcaster: Sendable {
        /// The steps (empty for code).
        public let steps: [UpcastStep]
        let custom: (@Sendable (inout UpcastEvent) -> Void)?

        /// Whether it is code, which only the application can run.
        public var isCustom: Bool { custom != nil }

        /// Applies the upcaster to `event`.
        func apply(to event: inout UpcastEvent) {
            if let custom { custom(&event) }
            for step in steps { step.apply(to: &event) }
        }

        /// Where it sends an event when its last move names a version (the collection and the
        /// version the event enters at), or `nil`.
        var movesAtAVersion: (collection: String, version: UInt16)? {
            for case .moveToCollection(let collection, let version) in steps.reversed() {
                return version.map { (collection, $0) }
            }
            return nil
        }

        /// How the store records it.
        var recorded: SchemaRecord.Upcaster { custom == nil ? .steps(steps) : .custom }
    }

    /// Checks declared schemas: valid collection and field names, each collection declared
    /// once, upcasters below their schema's version, valid names in every step. (Moves are
    /// checked against the recorded schemas too: ``SchemaRegistry/checkMoves(of:)``.)
    ///
    /// - Throws: ``EventStoreError/Code/invalidName`` or ``EventStoreError/Code/configurationMismatch``.
    static func validate(_ schemas: [CollectionSchema]) throws {
        var seen: Set<String> = []
        for schema in schemas {
            try Validation.collection(schema.collection)
            for field in schema.mergePolicies.keys { try Validation.fieldName(field) }
            for upcaster in schema.upcasters.values {
                for step in upcaster.steps { try step.validateNames() }
            }
            guard seen.insert(schema.collection).inserted else {
                throw EventStoreError(.configurationMismatch, "the schema of \(schema.collection) is declared twice")
            }
            if let version = schema.upcastVersions.last, version >= schema.version {
                throw EventStoreError(
                    .configurationMismatch,
                    "the schema of \(schema.collection) has an upcaster from version \(version), but its version is "
                        + "\(schema.version): an upcaster reads a version below the schema's")
            }
        }
    }

}
