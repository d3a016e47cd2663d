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
///
/// The writer checks its input and hands it to the transaction's `WriteSession`, which stamps,
/// encodes and records each event and keeps the log head, clock and origin sequence.
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
        return try session.append(change, in: writeTransaction)
    }

    /// Appends changes that ``Store/validate(_:)-([Change])`` already checked.
    func append(checked changes: [Change]) throws -> [Event] {
        try changes.map { try session.append($0, in: writeTransaction) }
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
        try session.ingest(try CheckedEvent(event, limit: store.configuration.maxEventBytes), in: writeTransaction)
    }

    /// What a sync push of `origin`'s own events declares to the server, taken in this writer's
    /// turn so that no write of the store is half done: the highest origin sequence of `origin`
    /// the log holds (this transaction included) and a stamp that every later event of this store
    /// exceeds (the clock, raised to the present millisecond and saved with the commit). A
    /// server tells from it an event the store wrote before the push (and no longer holds: it was
    /// restored) from one it writes after (see `PushRequest.clock` in EventSync).
    package func syncDeclaration(of origin: ReplicaID) throws -> (through: UInt64, clock: HLCTimestamp) {
        try session.declaration(of: origin, in: writeTransaction)
    }

    /// Ingests a batch, collecting what was appended and what was a duplicate.
    ///
    /// - Throws: As ``ingest(_:)``, for the first event that fails; nothing of the batch is then
    ///   kept once the error leaves the transaction.
    public func ingestAll(_ events: [Event]) throws -> Store.IngestResult {
        let limit = store.configuration.maxEventBytes
        return try ingestAll(checked: try events.map { try CheckedEvent($0, limit: limit) })
    }

    /// Ingests one event already checked (see ``CheckedEvent``), as ``ingest(_:)`` does.
    package func ingest(checked event: CheckedEvent) throws -> IngestOutcome {
        try session.ingest(event, in: writeTransaction)
    }

    /// Ingests events already checked (see ``CheckedEvent``), each encoded once, when it was
    /// checked.
    ///
    /// With `maxSkewMilliseconds`, the events' stamps may be that far ahead of this store's
    /// clock instead of ``Store/Configuration/maxClockSkewMilliseconds``: a sync server took
    /// them against its own clock, and a device whose clock is behind by more than the store's
    /// bound must still receive what others wrote (its clock then moves up to theirs, so that
    /// its next writes order after them).
    package func ingestAll(checked events: [CheckedEvent], maxSkewMilliseconds: UInt64? = nil) throws
        -> Store.IngestResult
    {
        var result = Store.IngestResult(appended: [], duplicates: [])
        for checked in events {
            switch try session.ingest(checked, maxSkewMilliseconds: maxSkewMilliseconds, in: writeTransaction) {
            case .appended(let seq):
                var appended = checked.event
                appended.seq = seq
                result.appended.append(appended)
            case .duplicate:
                result.duplicates.append(checked.event.id)
            }
        }
        return result
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
}
