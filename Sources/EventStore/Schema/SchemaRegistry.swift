/// The collection schemas a store interprets events with: what the opening application declared
/// (``Store/Configuration/schemas``) and what the store records (``SchemaRecord``).
///
/// Every place that turns an event into item state asks ``interpret(_:)`` first, so appends,
/// received events, rebuilds, verification and replays read an event alike.
struct SchemaRegistry: Sendable {
    /// The declared schemas, and for a recorded schema that is not declared (a tool's open) the
    /// one its recorded steps make.
    private let schemas: [String: CollectionSchema]
    /// For those recorded schemas with upcasters in code: the versions such upcasters read. An
    /// event that reaches one of them needs the application's code, so interpreting it fails.
    private let needsCode: [String: Set<UInt16>]

    static let none = SchemaRegistry(schemas: [], recorded: [])

    /// The registry of an open that declares `schemas` on a store that records `recorded`.
    init(schemas: [CollectionSchema], recorded: [SchemaRecord]) {
        var byName: [String: CollectionSchema] = [:]
        for schema in schemas { byName[schema.collection] = schema }
        var needsCode: [String: Set<UInt16>] = [:]
        for record in recorded where byName[record.collection] == nil {
            byName[record.collection] = record.runnable
            let custom = Set(record.upcasters.filter { $0.value == .custom }.keys)
            if !custom.isEmpty { needsCode[record.collection] = custom }
        }
        self.schemas = byName
        self.needsCode = needsCode
    }

    /// The collections whose upcasters in code this open lacks.
    var collectionsMissingUpcasters: [String] { needsCode.keys.sorted(by: utf8Less) }

    /// Whether every event's item is the one its log record names: no upcaster moves an event
    /// to another collection (``UpcastStep/moveToCollection(_:atVersion:)``) or is code, which may move it
    /// anywhere. A replay may then pick events by the item key in their stored bytes, without
    /// decoding them (``ReplayPasses``).
    var keepsItemKeys: Bool {
        schemas.values.allSatisfy { schema in
            schema.upcasters.values.allSatisfy { upcaster in
                !upcaster.isCustom
                    && !upcaster.steps.contains { if case .moveToCollection = $0 { true } else { false } }
            }
        }
    }

    /// The version an append to `collection` is stamped with.
    func version(of collection: String) -> UInt16 {
        schemas[collection]?.version ?? 0
    }

    /// The defaults of `collection`'s typed models (with `[]` and `0` for sets and counters).
    func defaults(of collection: String) -> [String: Value] {
        schemas[collection]?.decodingDefaults ?? [:]
    }

    /// How `collection`'s fields merge (fields not named: last writer wins).
    func policies(of collection: String) -> [String: MergePolicy] {
        schemas[collection]?.mergePolicies ?? [:]
    }

    /// The event as the current schema reads it: upcast from its version through every later
    /// one; `nil` for an event of a newer version than declared (written by a newer application,
    /// received through sync; a collection without a declared schema reads version 0), which
    /// this open cannot read: the log keeps it and sync passes it on, and it is applied once the
    /// application declares its version (the raised version rebuilds the projections). `nil` too
    /// for a patch the upcasters left with nothing to write (they removed every field it wrote):
    /// it changes nothing. The seq, id, stamps and version stay those of the logged event. An
    /// event that an upcaster moves to another collection at a version
    /// (``UpcastStep/moveToCollection(_:atVersion:)``) goes on through that collection's
    /// upcasters from that version, and is held back as the target's own events of a version
    /// it does not know yet would be.
    ///
    /// - Throws: ``EventStoreError/Code/configurationMismatch`` for an older event of a collection
    ///   whose upcasters this open lacks; ``EventStoreError/Code/invalidEvent`` when code
    ///   upcasters made an invalid event (a bad name; declarative steps are checked when declared)
    ///   or moved it between collections in a cycle.
    func interpret(_ event: Event) throws -> Event? {
        // A newer version than this open knows is held back.
        guard var schema = schemas[event.collection] else { return event.schema == 0 ? event : nil }
        guard event.schema <= schema.version else { return nil }
        guard event.schema < schema.version else { return event }
        var upcast = UpcastEvent(event, version: event.schema)
        var moves = 0
        while upcast.version < schema.version {
            try requireCode(schema, at: upcast.version, for: event)
            schema.upcasters[upcast.version]?.apply(to: &upcast)
            upcast.version += 1
            // A move that names a version: the event goes on as the target's own of that version.
            guard let entry = upcast.entryVersion else { continue }
            upcast.entryVersion = nil
            moves += 1
            guard moves <= SchemaRegistry.maximumMoves else {
                throw EventStoreError(
                    .invalidEvent,
                    "the upcasters of \(event.collection) moved event \(event.id) between collections more than "
                        + "\(SchemaRegistry.maximumMoves) times: they move events in a cycle")
            }
            guard let target = schemas[upcast.collection] else {
                guard entry == 0 else { return nil }
                break
            }
            guard entry <= target.version else { return nil }
            schema = target
            upcast.version = entry
        }
        // A patch left with nothing to write (its fields removed) changes nothing.
        if upcast.operation == .patch && upcast.fields.isEmpty && upcast.updates.isEmpty { return nil }
        do {
            try Validation.collection(upcast.collection)
            try Validation.item(upcast.item)
            let fields = upcast.operation == .delete ? [:] : upcast.fields
            try Validation.fields(fields, operation: upcast.operation, updates: upcast.updates.count)
            try Validation.updates(upcast.updates, fields: fields)
        } catch let error as EventStoreError {
            throw EventStoreError(
                .invalidEvent,
                "the upcasters of \(event.collection) turned event \(event.id) into an invalid event: \(error.message)",
                cause: error)
        }
        var interpreted = event
        interpreted.collection = upcast.collection
        interpreted.item = upcast.item
        interpreted.operation = upcast.operation
        interpreted.fields = upcast.operation == .delete ? [:] : upcast.fields
        interpreted.updates = upcast.updates
        return interpreted
    }

    /// How many times upcasters may move one event between collections (a cycle is an error).
    static let maximumMoves = 32

    /// Throws ``EventStoreError/Code/configurationMismatch`` when `schema`'s upcaster from
    /// `version`, which `event` reaches, is code that this open lacks.
    private func requireCode(_ schema: CollectionSchema, at version: UInt16, for event: Event) throws {
        guard needsCode[schema.collection]?.contains(version) == true else { return }
        throw EventStoreError(
            .configurationMismatch,
            "event \(event.id) of \(schema.collection) is at schema version \(version), and the store reads "
                + "\(schema.collection) at version \(schema.version) through upcasters in code that only the "
                + "application registers (Store.Configuration.schemas): do this from the application")
    }

    /// Checks the moves of `declared`'s upcasters against every schema this open reads with
    /// (declared and recorded): a move without a version into a collection with upcasters,
    /// which its events would skip; a version above the target's, whose events would never be
    /// read; and, across all schemas, moves at versions that lead back where they started.
    ///
    /// - Throws: ``EventStoreError/Code/configurationMismatch``, naming the move.
    func checkMoves(of declared: [CollectionSchema]) throws {
        for source in declared {
            for (from, upcaster) in source.upcasters {
                for case .moveToCollection(let collection, let entry) in upcaster.steps {
                    let version = self.version(of: collection)
                    if let entry {
                        guard entry <= version else {
                            throw EventStoreError(
                                .configurationMismatch,
                                "the schema of \(source.collection) moves events to \(collection) at version "
                                    + "\(entry), above \(collection)'s version \(version): they would never be read")
                        }
                    } else if !(schemas[collection]?.upcasters.isEmpty ?? true) || needsCode[collection] != nil {
                        throw EventStoreError(
                            .configurationMismatch,
                            "the schema of \(source.collection) moves events to \(collection) without a version, but "
                                + "\(collection)'s schema has upcasters, which the moved events would skip: name the "
                                + "version they enter at, .moveToCollection(\"\(collection)\", atVersion: N)")
                    }
                    try checkPath(from: (source.collection, from))
                }
            }
        }
    }

    /// Follows an event from the upcaster of `start` that moves it at a version, through each
    /// next move at a version it reaches; throws when it comes back to an upcaster it passed.
    private func checkPath(from start: (collection: String, version: UInt16)) throws {
        var passed: Set<String> = []
        var at = start
        while let schema = schemas[at.collection],
            let from = schema.upcastVersions.first(where: { version in
                version >= at.version && schema.upcasters[version]?.movesAtAVersion != nil
            }),
            let move = schema.upcasters[from]?.movesAtAVersion
        {
            guard passed.insert("\(at.collection)\u{0}\(from)").inserted else {
                throw EventStoreError(
                    .configurationMismatch,
                    "the schemas move events from \(start.collection) at version \(start.version) between "
                        + "collections in a cycle (back to \(at.collection)'s upcaster from version \(from))")
            }
            at = move
        }
    }
}
