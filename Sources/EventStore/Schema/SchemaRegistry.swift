/// The collection schemas a store interprets events with: what the opening application declared
/// (``Store/Configuration/schemas``) and what the store records (``SchemaRecord``).
///
/// Every place that turns an event into item state asks ``interpret(_:)`` first, so appends,
/// received events, rebuilds, verification and replays read an event alike.
struct SchemaRegistry: Sendable {
    private let schemas: [String: CollectionSchema]
    /// The recorded schemas with upcasters in code that this open does not have (a tool opening
    /// an application's store): interpreting an older event of those collections fails.
    private let missing: [String: SchemaRecord]

    static let none = SchemaRegistry(schemas: [], recorded: [])

    /// The registry of an open that declares `schemas` on a store that records `recorded`: a
    /// recorded schema that is not declared (a tool's open) is read through its recorded steps,
    /// or, when it has upcasters in code, marked missing.
    init(schemas: [CollectionSchema], recorded: [SchemaRecord]) {
        var byName: [String: CollectionSchema] = [:]
        for schema in schemas { byName[schema.collection] = schema }
        var missing: [String: SchemaRecord] = [:]
        for record in recorded where byName[record.collection] == nil {
            if let schema = record.declarative {
                byName[record.collection] = schema
            } else {
                missing[record.collection] = record
            }
        }
        self.schemas = byName
        self.missing = missing
    }

    /// Whether interpreting can change an event at all.
    var isEmpty: Bool { schemas.isEmpty && missing.isEmpty }

    /// The collections whose upcasters this open lacks.
    var collectionsMissingUpcasters: [String] { missing.keys.sorted(by: utf8Less) }

    /// The version an append to `collection` is stamped with.
    func version(of collection: String) -> UInt16 {
        schemas[collection]?.version ?? missing[collection]?.version ?? 0
    }

    /// Whether this open knows a schema for `collection` (declared, or recorded for a tool).
    func declares(_ collection: String) -> Bool {
        schemas[collection] != nil || missing[collection] != nil
    }

    /// The defaults of `collection`'s typed models.
    func defaults(of collection: String) -> [String: Value] {
        schemas[collection]?.defaults ?? [:]
    }

    /// The event as the current schema reads it: upcast from its version through every later
    /// one; `nil` for an event of a newer version than declared (written by a newer application,
    /// received through sync), which this open cannot read: the log keeps it and sync passes it
    /// on, and it is applied once the application declares its version (the raised version
    /// rebuilds the projections). The seq, id, stamps and version stay those of the logged event.
    ///
    /// - Throws: ``EventStoreError/Code/configurationMismatch`` for an older event of a collection
    ///   whose upcasters this open lacks; ``EventStoreError/Code/invalidEvent`` when the upcasters
    ///   made an invalid event (a bad name, a patch without fields).
    func interpret(_ event: Event) throws -> Event? {
        guard !isEmpty else { return event }
        if let record = missing[event.collection], event.schema < record.version,
            record.upcasters.contains(where: { $0.key >= event.schema && $0.value == .custom })
        {
            throw EventStoreError(
                .configurationMismatch,
                "event \(event.id) of \(event.collection) is at schema version \(event.schema), and the store reads "
                    + "\(event.collection) at version \(record.version) through upcasters in code that only the "
                    + "application registers (Store.Configuration.schemas): do this from the application")
        }
        guard event.schema <= version(of: event.collection) || !declares(event.collection) else { return nil }
        guard let schema = schemas[event.collection], event.schema < schema.version else { return event }
        var upcast = UpcastEvent(event, version: event.schema)
        while upcast.version < schema.version {
            schema.upcasters[upcast.version]?.apply(to: &upcast)
            upcast.version += 1
        }
        do {
            try Validation.collection(upcast.collection)
            try Validation.item(upcast.item)
            try Validation.fields(upcast.operation == .delete ? [:] : upcast.fields, operation: upcast.operation)
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
        return interpreted
    }
}
