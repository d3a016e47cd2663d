import LMDB

/// Applies events to one projection generation: item history, items, conflicts, the search
/// index and custom projections.
///
/// The same code serves appends and rebuilds, which is what makes a rebuild byte-identical to
/// the projections maintained incrementally.
final class ProjectionWriter {
    let databases: ProjectionDatabases
    let search: SearchIndexWriter
    let projections: [any Projection]
    /// The declared indexes (`nil`: none).
    let indexes: IndexWriter?
    /// Counters pending for the checkpoint (see ``ProjectionCounters``).
    var counters = ProjectionCounters()
    /// Set during a rebuild from the log: search indexing waits for ``indexLiveItems(in:)``.
    var defersSearch = false
    /// How events are read (upcast to their collection's current schema).
    let schemas: SchemaRegistry

    init(databases: ProjectionDatabases, configuration: Store.Configuration) {
        self.databases = databases
        self.schemas = configuration.schemaRegistry
        self.search = SearchIndexWriter(configuration: configuration.search)
        self.projections = configuration.projections
        self.indexes = IndexWriter(definitions: configuration.indexes, database: databases.indexes)
    }

    static let appliedKey = Array("applied-through".utf8)

    /// Applies one event that sits at `event.seq` in the log, as its collection's schema reads
    /// it (``SchemaRegistry/interpret(_:)``; an event of a newer schema is held back).
    ///
    /// - Returns: The item's state after the event, `nil` for an event held back.
    @discardableResult
    func apply(_ logged: Event, tx: WriteTransaction) throws -> ItemState? {
        guard let event = try schemas.interpret(logged) else { return nil }
        let itemKey = Keys.item(event.collection, event.item)
        return try apply(event, before: try itemRecord(itemKey, tx: tx), itemKey: itemKey, tx: tx)
    }

    /// The item's stored record, or an empty one.
    func itemRecord(_ itemKey: [UInt8], tx: ReadTransaction) throws -> ItemRecord {
        try itemKey.withUnsafeBytes { key in
            try tx.value(forKey: key, in: databases.items).map { try ItemRecord(decoding: $0) }
        } ?? ItemRecord()
    }

    /// Applies one event, already interpreted (``SchemaRegistry/interpret(_:)``), whose item
    /// record before it is already loaded.
    @discardableResult
    func apply(_ event: Event, before record: ItemRecord, itemKey: [UInt8], tx: WriteTransaction) throws -> ItemState {
        var updated = record
        if let chunk = updated.appendHistory(event.seq, itemKey: itemKey) {
            try tx.put(chunk.value, forKey: chunk.key, in: databases.items)
        }
        let before = record.state
        var after = before
        let outcomes = after.apply(event, collectOutcomes: true)
        var searchDocument = record.searchDocument
        if !defersSearch {
            // A replay that defers search defers the declared indexes too (indexItemsAfterReplay).
            try indexes?.update(collection: event.collection, id: event.item, before: before, after: after, tx: tx)
            searchDocument = try search.update(
                collection: event.collection, itemKey: itemKey, before: record, after: after, tx: tx,
                databases: databases, changes: &counters.search)
        }
        try tx.put(
            ItemRecord(state: after, searchDocument: searchDocument, history: updated.history).encoded(),
            forKey: itemKey, in: databases.items)
        if before.exists != after.exists {
            try counters.adjustCount(event.collection, by: after.exists ? 1 : -1, tx: tx, databases: databases)
        }

        for outcome in outcomes where outcome.concurrent {
            guard let winner = outcome.winner, let loser = outcome.loser else { continue }
            let record = ConflictRecord(
                collection: event.collection, item: event.item, field: outcome.field, seq: event.seq,
                winner: FieldWrite(field: winner, cleared: outcome.winnerClears),
                loser: FieldWrite(field: loser, cleared: outcome.loserClears))
            try tx.put(
                record.encodedValue(), forKey: Keys.conflict(itemKey, event.seq, outcome.field), in: databases.conflicts
            )
        }

        if !projections.isEmpty {
            let change = ProjectionChange(
                event: event,
                before: before.exists ? before.item(collection: event.collection, id: event.item) : nil,
                after: after.exists ? after.item(collection: event.collection, id: event.item) : nil)
            for projection in projections {
                let context = ProjectionContext(
                    transaction: tx, databases: databases.custom, projectionName: projection.name)
                try projection.apply(change, in: context)
            }
        }
        return after
    }

    /// Records that every event through `seq` is applied, with each custom projection's version.
    func checkpoint(through seq: UInt64, tx: WriteTransaction) throws {
        try counters.flush(tx: tx, databases: databases)
        try tx.put(Keys.seq(seq), forKey: ProjectionWriter.appliedKey, in: databases.state)
        for projection in projections {
            try tx.put(
                Keys.seq(UInt64(projection.version)), forKey: ProjectionWriter.versionKey(projection.name),
                in: databases.state)
        }
    }

    static func countKey(_ collection: String) -> [UInt8] { Array("count.\(collection)".utf8) }

    static func versionKey(_ name: String) -> [UInt8] { Array("projection-version.\(name)".utf8) }
}

extension FieldWrite {
    init(field: ItemState.Field, cleared: Bool) {
        self.init(event: field.eventID, hlc: field.stamp.hlc, value: cleared ? Value?.none : Value?.some(field.value))
    }
}

extension ItemState {
    func item(collection: String, id: String) -> Item {
        Item(collection: collection, id: id, fields: values, version: version?.hlc ?? .zero)
    }
}
