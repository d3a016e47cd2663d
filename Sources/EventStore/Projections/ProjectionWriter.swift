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
    /// Computes the search index's merge steps between commits (the store's commits); `nil`:
    /// the checkpoint computes them.
    var mergeAhead: MergeAhead?
    /// Set during a rebuild from the log: search indexing waits for
    /// ``indexReplayedItems(_:in:)``.
    private(set) var defersSearch = false
    /// During a replay that defers search: the item records, held in memory.
    private(set) var replayRecords: ReplayRecords?
    /// Whether the replay that defers search holds item records (each pass anew).
    private var holdsRecords = false
    /// How events are read (upcast to their collection's current schema).
    let schemas: SchemaRegistry
    /// The most item records a deferred replay holds in memory, and the most bytes of events
    /// applied to them.
    let replayRecordLimit: Int
    let replayRecordBytes: Int

    init(databases: ProjectionDatabases, configuration: Store.Configuration) {
        self.databases = databases
        self.schemas = configuration.schemaRegistry
        self.replayRecordLimit = configuration.replayRecordLimit
        self.replayRecordBytes = configuration.replayRecordBytes
        self.search = SearchIndexWriter(
            configuration: configuration.search, tokenizerChunk: configuration.tokenizerChunk)
        self.projections = configuration.projections
        self.indexes = IndexWriter(definitions: configuration.indexes, database: databases.indexes)
    }

    static let appliedKey = Array("applied-through".utf8)

    /// Applies one event that sits at `event.seq` in the log, as its collection's schema reads
    /// it (``SchemaRegistry/interpret(_:)``; an event of a newer schema is held back).
    ///
    /// - Parameter bytes: The event's size in the log, which a deferred replay counts against
    ///   the memory it holds records in.
    /// - Returns: The item's state after the event, `nil` for an event held back.
    @discardableResult
    func apply(_ logged: Event, bytes: Int = 0, tx: WriteTransaction) throws -> ItemState? {
        guard let event = try schemas.interpret(logged) else { return nil }
        let itemKey = Keys.item(event.collection, event.item)
        if let replayRecords {
            return try replayRecords.update(itemKey, eventBytes: bytes, load: { try itemRecord(itemKey, tx: tx) }) {
                try project(event, record: &$0, itemKey: itemKey, tx: tx)
            }
        }
        return try apply(event, before: try itemRecord(itemKey, tx: tx), itemKey: itemKey, tx: tx)
    }

    /// Starts a replay of the log that defers the search index and the declared indexes to
    /// ``indexReplayedItems(_:in:)`` (after each pass) and ``indexItemsAfterReplay(in:)``. Each
    /// pass, from its ``beginReplayPass()`` on, holds item records in memory (unless
    /// `holdingRecords` is `false`), as long as no more than
    /// ``Store/Configuration/replayRecordLimit`` items and
    /// ``Store/Configuration/replayRecordBytes`` bytes of events come (see
    /// ``replayChunkCommitted(in:)``).
    func beginDeferredReplay(holdingRecords: Bool = true) {
        defersSearch = true
        holdsRecords = holdingRecords
        replayRecords = nil
    }

    /// Starts a pass of a deferred replay (see ``ReplayPasses``): holds item records again when
    /// the replay holds them.
    func beginReplayPass() {
        guard defersSearch, holdsRecords, replayRecords == nil else { return }
        replayRecords = ReplayRecords(limit: replayRecordLimit, byteLimit: replayRecordBytes)
    }

    /// Whether a deferred replay can go in passes over the log, one range of items each
    /// (``ReplayPasses``): no custom projection sees the events, and no upcaster moves one.
    var replaysInPasses: Bool {
        projections.isEmpty && schemas.keepsItemKeys
    }

    /// Ends a deferred replay: later events are indexed as they are applied.
    func endDeferredReplay() {
        defersSearch = false
        holdsRecords = false
        releaseReplayRecords()
    }

    /// Lets the held records go (on another thread) and holds none until the next pass.
    func releaseReplayRecords() {
        replayRecords?.releaseInBackground()
        replayRecords = nil
    }

    /// Starts a chunk of a deferred replay.
    ///
    /// - Throws: ``ReplayRestart`` when an aborted attempt at the chunk changed held records.
    func beginReplayChunk() throws {
        counters = ProjectionCounters()
        if replayRecords?.changedSinceCommit == true { throw ReplayRestart() }
    }

    /// Ends a chunk of a deferred replay whose transaction committed. When more records (or
    /// bytes of events) are held than their limit, they are written to the store and the pass
    /// goes on without holding any: its items did not fit, and holding some only to read them
    /// back later costs more than it saves.
    func replayChunkCommitted(in environment: Environment) throws {
        guard let replayRecords else { return }
        replayRecords.commit()
        if replayRecords.isFull { try stopHoldingRecords(in: environment) }
    }

    /// Writes the held records to the store, in key order, and holds none from now on.
    func stopHoldingRecords(in environment: Environment) throws {
        try replayRecords?.flush(in: environment, database: databases.items)
        replayRecords = nil
    }

    /// The item's stored record, or an empty one.
    func itemRecord(_ itemKey: [UInt8], tx: ReadTransaction) throws -> ItemRecord {
        try itemKey.withUnsafeBytes { key in
            try tx.value(forKey: key, in: databases.items).map { try ItemRecord(decoding: $0) }
        } ?? ItemRecord()
    }

    /// Applies one event, already interpreted (``SchemaRegistry/interpret(_:)``), whose item
    /// record before it is already loaded.
    ///
    /// The record is taken, not borrowed: one the caller does not keep (a replay's, read for the
    /// event) then changes in place when nothing needs the state before the event.
    @discardableResult
    func apply(_ event: Event, before record: consuming ItemRecord, itemKey: [UInt8], tx: WriteTransaction) throws
        -> ItemState
    {
        let after = try project(event, record: &record, itemKey: itemKey, tx: tx)
        try tx.put(record.encoded(), forKey: itemKey, in: databases.items)
        return after
    }

    /// Applies one event to the item's `record` (its state, history and search document) and
    /// writes what else the event changes: a history chunk, the collection's count, conflicts,
    /// the declared indexes, the search index and custom projections. The caller writes the
    /// record. Returns the item's state after the event.
    private func project(_ event: Event, record: inout ItemRecord, itemKey: [UInt8], tx: WriteTransaction) throws
        -> ItemState
    {
        if let chunk = record.appendHistory(event.seq, itemKey: itemKey) {
            try tx.put(chunk.value, forKey: chunk.key, in: databases.items)
        }
        // The state before the event, for what compares it with the new one. A replay that
        // defers the indexes and has no custom projections keeps none, so the state changes in
        // place instead of being copied.
        let before: ItemState? = defersSearch && projections.isEmpty ? nil : record.state
        let existed = record.state.exists
        let outcomes = record.state.apply(event, reporting: .conflicts)
        let after = record.state
        if !defersSearch, let before {
            // A replay that defers search defers the declared indexes too (indexItemsAfterReplay).
            indexes?.update(
                collection: event.collection, id: event.item, before: before, after: after, changes: &counters.indexes)
            record.searchDocument = try search.update(
                collection: event.collection, itemKey: itemKey, before: before, document: record.searchDocument,
                after: after, tx: tx, databases: databases, changes: &counters.search)
        }
        if existed != after.exists {
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

        if let before, !projections.isEmpty {
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
        try counters.flush(tx: tx, databases: databases, mergeAhead: mergeAhead)
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
