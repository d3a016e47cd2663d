import LMDB

/// A write transaction on a store, valid only inside the closure that received it
/// (``Store/write(_:)-(@Sendable(StoreWriter)throws->T)``). It runs on the writer thread;
/// everything it does commits together, or not at all when the closure throws.
///
/// ```swift
/// try await store.write { writer in
///     let event = try writer.append(.put("notes", id: "n1", fields: ["title": "Draft"]))
///     try writer.setMetadata(Array("\(event.seq)".utf8), forKey: "app.last-note")
/// }
/// ```
public final class StoreWriter: StoreReader {
    let writeTransaction: WriteTransaction
    let session: WriteSession

    init(tx: WriteTransaction, session: WriteSession) {
        self.writeTransaction = tx
        self.session = session
        super.init(tx: tx, store: session.store)
    }

    /// The outcome of ingesting one received event.
    public enum IngestOutcome: Sendable, Hashable {
        /// The event was appended at this seq.
        case appended(seq: UInt64)
        /// The log already held the event, at this seq; nothing changed.
        case duplicate(seq: UInt64)
    }

    /// Stamps a local change, appends it, and updates the projections.
    ///
    /// - Returns: The appended event, with its seq, id and stamp.
    /// - Throws: ``EventStoreError`` for an invalid change or an event over the size limit.
    @discardableResult
    public func append(_ change: Change) throws -> Event {
        try Validation.change(change)
        let itemKey = Keys.item(change.collection, change.item)
        let before = try itemState(itemKey)
        var state = session.state
        let hlc = state.clock.tick()
        state.originSequence += 1
        let event = Event(
            seq: state.head + 1, id: EventID(origin: state.replica, sequence: state.originSequence), hlc: hlc,
            base: before.version?.hlc ?? .zero, collection: change.collection, item: change.item,
            operation: change.operation, fields: change.fields, schema: change.schema)
        try write(event, before: before, itemKey: itemKey)
        state.head = event.seq
        state.appended += 1
        session.state.clock = state.clock
        session.state.originSequence = state.originSequence
        session.state.head = state.head
        session.state.appended = state.appended
        return event
    }

    /// Appends an event received from another replica, keeping its id and stamp, and merges it
    /// into the projections exactly like a local one. An event already in the log is a no-op
    /// (a duplicate) when its content is the same, byte for byte.
    ///
    /// - Throws: ``EventStoreError`` for an invalid event, one over the size limit, or a stamp
    ///   further ahead of this replica's clock than the skew bound;
    ///   ``EventStoreError/Code/eventConflict`` when the log holds another event under the same
    ///   id (see ``EventIDConflict``).
    @discardableResult
    public func ingest(_ event: Event) throws -> IngestOutcome {
        _ = try Validation.event(event, limit: store.configuration.maxEventBytes)
        try session.state.clock.validate(event.hlc)
        let seq = session.state.head + 1
        let idKey = Keys.eventID(event.id)
        guard try writeTransaction.put(Keys.seq(seq), forKey: idKey, in: store.schema.eventIDs, options: .noOverwrite) else {
            let existing = try self.seq(of: event.id) ?? 0
            try checkSameContent(event, at: existing)
            return .duplicate(seq: existing)
        }
        var stored = event
        stored.seq = seq
        let itemKey = Keys.item(event.collection, event.item)
        try write(stored, before: try itemState(itemKey), itemKey: itemKey, idRecorded: true)
        session.state.clock.receive(event.hlc)
        if event.id.origin == session.state.replica {
            session.state.originSequence = max(session.state.originSequence, event.id.sequence)
        }
        session.state.head = seq
        session.state.appended += 1
        return .appended(seq: seq)
    }

    /// Stores an application or sync metadata entry in the same transaction as the events.
    ///
    /// - Parameters:
    ///   - value: The bytes to store, or `nil` to remove the entry.
    ///   - key: The entry's name. Names starting with `store.` are reserved.
    public func setMetadata(_ value: [UInt8]?, forKey key: String) throws {
        guard !key.isEmpty, !key.hasPrefix("store."), key.utf8.count <= 255 else {
            throw EventStoreError(.invalidName, "metadata key \(key.debugDescription) is empty, too long or reserved")
        }
        if let value {
            try writeTransaction.put(value, forKey: Array(key.utf8), in: store.schema.meta)
        } else {
            try writeTransaction.delete(Array(key.utf8), in: store.schema.meta)
        }
    }

    /// Throws ``EventStoreError/Code/eventConflict`` unless the log holds exactly `event` at `seq`.
    private func checkSameContent(_ event: Event, at seq: UInt64) throws {
        let received = event.encoded()
        let held = try Keys.seq(seq).withUnsafeBytes { key in
            try tx.value(forKey: key, in: store.schema.events).map { Array($0) }
        }
        guard let held else { throw EventStoreError(.corrupt, "event id \(event.id) names seq \(seq), which the log does not hold") }
        guard held != received else { return }
        throw EventStoreError.conflict(
            EventIDConflict(id: event.id, held: EventDigest(canonicalBytes: held), received: EventDigest(canonicalBytes: received)))
    }

    private func itemState(_ itemKey: [UInt8]) throws -> ItemState {
        try itemKey.withUnsafeBytes { key in
            try tx.value(forKey: key, in: try projection.items).map { try ItemState(decoding: $0) }
        } ?? ItemState()
    }

    private func write(_ event: Event, before: ItemState, itemKey: [UInt8], idRecorded: Bool = false) throws {
        let encoded = event.encoded()
        guard encoded.count <= store.configuration.maxEventBytes else {
            throw EventStoreError(
                .eventTooLarge, "event for \(event.collection)/\(event.item) is \(encoded.count) bytes (limit \(store.configuration.maxEventBytes))")
        }
        try encoded.withUnsafeBytes { value in
            try Keys.seq(event.seq).withUnsafeBytes { key in
                _ = try writeTransaction.put(value, forKey: key, in: store.schema.events, options: .append)
            }
        }
        if !idRecorded {
            guard try writeTransaction.put(Keys.seq(event.seq), forKey: Keys.eventID(event.id), in: store.schema.eventIDs, options: .noOverwrite) else {
                throw EventStoreError(.corrupt, "event id \(event.id) is already in the log: the origin sequence went backwards")
            }
        }
        try session.projections.apply(event, before: before, itemKey: itemKey, tx: writeTransaction)
    }
}
