import Synchronization
import LMDB

/// The state one write transaction works with: the log head, this replica's id, origin sequence
/// and clock, and the active projection generation. Loaded from the store at the start of every
/// transaction (another process may have written since) and saved when it ends.
final class WriteSession {
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

    init(store: Store, tx: WriteTransaction) throws {
        self.store = store
        self.tx = tx
        let schema = store.schema
        let head = try tx.withCursor(on: schema.events) { cursor in
            try cursor.last().map { try Keys.seq(from: $0.key) } ?? 0
        }
        let origin = try Meta.uint64(tx, schema.meta, Meta.originSequence) ?? 0
        let replica = try Meta.replicaID(tx, schema.meta)
        let hlc = HLCTimestamp(rawValue: try Meta.uint64(tx, schema.meta, Meta.hlc) ?? 0)
        var clock = store.clock.withLock { $0 }
        clock.observe(hlc)
        state = State(head: head, replica: replica, originSequence: origin, clock: clock)
        let generation = try StoreReader.activeGeneration(tx, schema)
        projections = ProjectionWriter(databases: schema.generations[generation], configuration: store.configuration)
    }

    /// Saves the clock, the origin sequence and the projection checkpoint.
    func finish() throws {
        guard state.appended > 0 else { return }
        let meta = store.schema.meta
        try Meta.setUInt64(tx, meta, Meta.hlc, state.clock.last.rawValue)
        try Meta.setUInt64(tx, meta, Meta.originSequence, state.originSequence)
        try projections.checkpoint(through: state.head, tx: tx)
        let clock = state.clock
        store.clock.withLock { $0 = clock }
    }
}
