import LMDB
import Synchronization

/// The one owner of a write transaction's state: the log head, this replica's id, origin
/// sequence and clock, the item states it reads, and the projection generation it writes.
///
/// Every event goes into the log through ``append(_:in:)`` (a local change, stamped here) or
/// ``ingest(_:maxSkewMilliseconds:in:)`` (a received event, keeping its id and stamp); both
/// record its id, then end in ``record(_:encoded:before:itemKey:in:)``: the event is written
/// once, under the next seq, the projections applied, and the state advanced the same way.
/// Loaded at the start of every transaction (another process may have written since) and saved
/// by ``finish()`` before it commits.
final class WriteSession {
    /// What a commit saves and what a failed request of a group rolls back.
    struct State {
        var head: UInt64
        var replica: ReplicaID
        var originSequence: UInt64
        var clock: HybridLogicalClock
        var appended = 0
    }

    let store: Store
    let tx: WriteTransaction
    let projections: ProjectionWriter
    var state: State
    /// The values of `meta` when the transaction began: ``finish()`` writes only what changed.
    private let stored: (hlc: UInt64, originSequence: UInt64)

    init(store: Store, tx: WriteTransaction) throws {
        self.store = store
        self.tx = tx
        let schema = store.schema
        let head = try tx.withCursor(on: schema.events) { cursor in
            try cursor.last().map { try Keys.seq(from: $0.key) } ?? 0
        }
        let origin = try Meta.uint64(tx, schema.meta, Meta.originSequence) ?? 0
        let replica = try Meta.replicaID(tx, schema.meta)
        let hlc = try Meta.uint64(tx, schema.meta, Meta.hlc) ?? 0
        var clock = store.clock.withLock { $0 }
        if store.identity.withLock({ $0 }) == replica {
            clock.observe(HLCTimestamp(rawValue: hlc))
        } else {
            // Another process moved the store to a new replica id, and may have set its clock
            // back with it (Store.restamp(from:notAfter:)): the stored clock, which every commit
            // keeps at or above its stamps, is the store's.
            clock.setBack(to: HLCTimestamp(rawValue: hlc))
            store.identity.withLock { $0 = replica }
            // Published with the id, whether this transaction appends or commits at all.
            let followed = clock
            store.clock.withLock { $0 = followed }
        }
        stored = (hlc, origin)
        state = State(head: head, replica: replica, originSequence: origin, clock: clock)
        let generation = try StoreReader.activeGeneration(tx, schema)
        projections = ProjectionWriter(databases: schema.generations[generation], configuration: store.configuration)
        projections.mergeAhead = store.mergeAhead
    }

    /// The outcome of ingesting one received event.
    typealias IngestOutcome = StoreWriter.IngestOutcome

    /// Stamps a checked local change (see ``Validation/change(_:)``) and records it.
    func append(_ change: Change, in tx: WriteTransaction) throws -> Event {
        let itemKey = Keys.item(change.collection, change.item)
        let before = try itemRecord(itemKey, in: tx)
        var clock = state.clock
        let schemas = projections.schemas
        let current = schemas.version(of: change.collection)
        let version = change.schema ?? current
        // Sets and counters are written as updates against what this replica holds; a change
        // that names an older version is read through the upcasters, as written.
        var parts = (fields: change.fields, updates: [String: FieldUpdate]())
        if version == current {
            parts = try before.state.eventParts(
                for: change, policies: schemas.policies(of: change.collection), base: change.base,
                incrementsSince: { name in
                    try self.increments(of: name, itemKey: itemKey, after: change.base ?? .zero, in: tx)
                })
            try Validation.updates(parts.updates, fields: parts.fields)
        } else if let name = change.edits.keys.first {
            throw EventStoreError(
                .invalidEvent,
                "the change to \(change.collection)/\(change.item) edits \(name.debugDescription) at schema version "
                    + "\(version): edits are made at the current version (\(current))")
        }
        // The writer saw the item as it was at the change's base, when it names one.
        let seen = before.state.version?.hlc ?? .zero
        let event = Event(
            seq: state.head + 1, id: EventID(origin: state.replica, sequence: state.originSequence + 1),
            hlc: clock.tick(), base: min(change.base ?? seen, seen), collection: change.collection,
            item: change.item, operation: change.operation, fields: parts.fields, schema: version,
            updates: parts.updates)
        let encoded = event.encoded()
        let limit = store.configuration.maxEventBytes
        guard encoded.count <= limit else {
            throw EventStoreError(
                .eventTooLarge,
                "event for \(change.collection)/\(change.item) is \(encoded.count) bytes (limit \(limit))")
        }
        let idKey = Keys.eventID(event.id)
        guard try tx.put(Keys.seq(event.seq), forKey: idKey, in: store.schema.eventIDs, options: .noOverwrite) else {
            throw EventStoreError(
                .corrupt, "event id \(event.id) is already in the log: the origin sequence went backwards")
        }
        // An event stamped with the current version reads as written; an older one (a change
        // that names its version) is upcast like a received one.
        guard let applied = try schemas.interpret(event) else {
            throw EventStoreError(
                .invalidEvent,
                event.schema > schemas.version(of: change.collection)
                    ? "the change to \(change.collection)/\(change.item) names schema version \(event.schema), above the "
                        + "\(schemas.version(of: change.collection)) this store declares"
                    : "the change to \(change.collection)/\(change.item), at schema version \(event.schema), writes "
                        + "nothing once upcast to version \(schemas.version(of: change.collection)) (every field it names "
                        + "was removed, or it moves to a collection that does not read that version yet)")
        }
        if version != current {
            // Sets and counters are written against what the replica holds, at the current version.
            let policies = schemas.policies(of: applied.collection)
            if let name = applied.fields.keys.first(where: { (policies[$0] ?? .lastWriterWins) != .lastWriterWins }) {
                throw EventStoreError(
                    .invalidEvent,
                    "the change to \(change.collection)/\(change.item) at schema version \(version) writes "
                        + "\(name.debugDescription), which \(applied.collection) merges as \(policies[name]!): write it "
                        + "at the current version (\(current))")
            }
        }
        let moved = applied.collection != event.collection || applied.item != event.item
        let appliedKey = moved ? Keys.item(applied.collection, applied.item) : itemKey
        try record(
            event, encoded: encoded,
            applying: (applied, moved ? try itemRecord(appliedKey, in: tx) : before, appliedKey),
            in: tx)
        return event
    }

    /// Records a checked received event (see ``CheckedEvent``) under the next seq, or finds it
    /// in the log already. Its stamp may be at most the store's skew bound ahead of its clock, or
    /// `maxSkewMilliseconds` (see ``StoreWriter/ingestAll(checked:maxSkewMilliseconds:)``).
    func ingest(_ checked: CheckedEvent, maxSkewMilliseconds: UInt64? = nil, in tx: WriteTransaction) throws
        -> IngestOutcome
    {
        let event = checked.event
        let idKey = Keys.eventID(event.id)
        func heldSeq() throws -> UInt64? {
            try idKey.withUnsafeBytes { key in
                try tx.value(forKey: key, in: store.schema.eventIDs).map { try Keys.seq(from: $0) }
            }
        }
        do {
            try state.clock.validate(event.hlc, maxSkewMilliseconds: maxSkewMilliseconds)
        } catch {
            // An event the log holds is a duplicate whatever its stamp says now (a retry after
            // this clock stepped back): only a new one is refused.
            guard let existing = try heldSeq() else { throw error }
            try checkSameContent(checked, at: existing, in: tx)
            return .duplicate(seq: existing)
        }
        let seq = state.head + 1
        guard try tx.put(Keys.seq(seq), forKey: idKey, in: store.schema.eventIDs, options: .noOverwrite) else {
            let existing = try heldSeq() ?? 0
            try checkSameContent(checked, at: existing, in: tx)
            return .duplicate(seq: existing)
        }
        var stored = event
        stored.seq = seq
        guard let applied = try projections.schemas.interpret(stored) else {
            // Written by a newer schema: logged (and synced on), applied after the upgrade.
            try record(stored, encoded: checked.encoded, applying: nil, in: tx)
            return .appended(seq: seq)
        }
        let itemKey = Keys.item(applied.collection, applied.item)
        try record(
            stored, encoded: checked.encoded, applying: (applied, try itemRecord(itemKey, in: tx), itemKey), in: tx)
        return .appended(seq: seq)
    }

    /// Writes an event whose id is recorded, applies it (as its schema reads it, with its item's
    /// record and key; `nil` for an event held back) to the projections and advances the state:
    /// the same steps for local and received events.
    private func record(
        _ event: Event, encoded: [UInt8], applying: (event: Event, before: ItemRecord, itemKey: [UInt8])?,
        in tx: WriteTransaction
    ) throws {
        try encoded.withUnsafeBytes { value in
            try Keys.seq(event.seq).withUnsafeBytes { key in
                _ = try tx.put(value, forKey: key, in: store.schema.events, options: .append)
            }
        }
        if let applying {
            try projections.apply(applying.event, before: applying.before, itemKey: applying.itemKey, tx: tx)
        }
        state.head = event.seq
        state.appended += 1
        state.clock.receive(event.hlc)
        if event.id.origin == state.replica {
            state.originSequence = max(state.originSequence, event.id.sequence)
        }
    }

    /// What increments stamped after `base` added to counter `name` of an item: walks the
    /// item's history (only a change made from an older version of the item asks).
    private func increments(of name: String, itemKey: [UInt8], after base: HLCTimestamp, in tx: ReadTransaction) throws
        -> Int64
    {
        var sum: Int64 = 0
        for seq in try ItemHistory.seqs(of: itemKey, tx: tx, items: projections.databases.items) {
            let logged = try Keys.seq(seq).withUnsafeBytes { key in
                try tx.value(forKey: key, in: store.schema.events).map { try Event(decoding: $0, seq: seq) }
            }
            if let logged, logged.hlc > base, let event = try projections.schemas.interpret(logged),
                let increment = event.updates[name]?.increment
            {
                sum &+= increment
            }
        }
        return sum
    }

    /// The item's merged state and search document, or an empty record.
    func itemRecord(_ itemKey: [UInt8], in tx: ReadTransaction) throws -> ItemRecord {
        try projections.itemRecord(itemKey, tx: tx)
    }

    /// Throws ``EventStoreError/Code/eventConflict`` unless the log holds exactly `checked` at `seq`.
    private func checkSameContent(_ checked: CheckedEvent, at seq: UInt64, in tx: ReadTransaction) throws {
        let held = try Keys.seq(seq).withUnsafeBytes { key in
            try tx.value(forKey: key, in: store.schema.events).map { Array($0) }
        }
        guard let held else {
            throw EventStoreError(
                .corrupt, "event id \(checked.event.id) names seq \(seq), which the log does not hold")
        }
        try checked.checkSameContent(as: held)
    }

    /// What a sync push of `origin`'s own events declares (see ``StoreWriter/syncDeclaration(of:)``):
    /// the highest origin sequence of `origin` the log holds, this transaction included, and the
    /// clock raised to the present millisecond (saved by ``finish()``), which every later local
    /// stamp exceeds.
    func declaration(of origin: ReplicaID, in tx: ReadTransaction) throws -> (through: UInt64, clock: HLCTimestamp) {
        let through = try Store.lastSequence(of: origin, in: tx, schema: store.schema)
        let now = min(store.configuration.physicalClock(), (1 << 48) - 1)
        state.clock.receive(HLCTimestamp(physical: now, logical: 0))
        return (through, state.clock.last)
    }

    /// Saves the clock and the origin sequence (each only when it moved) and the projection
    /// checkpoint, when the transaction appended anything; then publishes the clock.
    func finish() throws {
        let meta = store.schema.meta
        guard state.appended > 0 else {
            // Only a declaration moved the clock: saved and published, so that later stamps stay
            // above what it declared (after a restart, or a clock that steps back).
            if state.clock.last.rawValue != stored.hlc {
                try Meta.setUInt64(tx, meta, Meta.hlc, state.clock.last.rawValue)
                let clock = state.clock
                store.clock.withLock { $0 = clock }
            }
            return
        }
        if state.clock.last.rawValue != stored.hlc { try Meta.setUInt64(tx, meta, Meta.hlc, state.clock.last.rawValue) }
        if state.originSequence != stored.originSequence {
            try Meta.setUInt64(tx, meta, Meta.originSequence, state.originSequence)
        }
        try projections.checkpoint(through: state.head, tx: tx)
        try store.markUnregisteredProjectionsStale(tx)
        let clock = state.clock
        store.clock.withLock { $0 = clock }
    }
}
