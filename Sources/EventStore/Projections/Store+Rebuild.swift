import Foundation
import LMDB
import Logging
import Synchronization

extension Store {
    /// Progress of a long operation over the log (rebuild, verify, replay).
    public struct Progress: Sendable, Hashable {
        /// Events processed so far.
        public var processed: UInt64
        /// Events to process in all.
        public var total: UInt64
    }

    /// Rebuilds every projection (items, history, conflicts, search, custom) from the log.
    ///
    /// The log is replayed in chunks, with bulk durability and a flush at the end, into the
    /// inactive projection generation; readers keep seeing the old projections until one final
    /// commit switches to the new ones. Writes wait until the rebuild ends.
    ///
    /// - Parameter progress: Called after each chunk.
    public func rebuildProjections(progress: (@Sendable (Progress) -> Void)? = nil) async throws {
        try await exclusive { store in try store.performRebuild(progress: progress) }
    }

    /// The blocking variant of ``rebuildProjections(progress:)``.
    @_disfavoredOverload
    public func rebuildProjections(progress: (@Sendable (Progress) -> Void)? = nil) throws {
        guard let writer else { throw EventStoreError(.readOnly, "the store is open read-only") }
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        writer.submit(
            Writer.Request(
                eventCount: 0, body: { _ in },
                complete: { outcome in
                    if case .failure(let error) = outcome { failure.withLock { $0 = error } }
                    done.signal()
                },
                exclusive: { store in try store.performRebuild(progress: progress) }))
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Runs on the writer thread.
    func performRebuild(progress: (@Sendable (Progress) -> Void)?) throws {
        do {
            try performRebuild(holdingRecords: true, progress: progress)
        } catch is ReplayRestart {
            logger.notice("a rebuild's write ran again after the map grew: rebuilding without holding items in memory")
            try performRebuild(holdingRecords: false, progress: progress)
        }
    }

    private func performRebuild(holdingRecords: Bool, progress: (@Sendable (Progress) -> Void)?) throws {
        let started = Date()
        let active = try environment.read { tx in try StoreReader.activeGeneration(tx, schema) }
        let target = 1 - active
        let databases = schema.generations[target]
        let projector = ProjectionWriter(databases: databases, configuration: configuration)
        try environment.write { tx in
            for (_, database) in databases.all { try tx.removeAll(in: database) }
            // Segment ids go on from the active generation's, so an id is never reused in a
            // database with other content (caches of segment terms rely on it).
            var directory = SegmentDirectory()
            directory.nextSegment = try SegmentDirectory.load(tx: tx, state: schema.generations[active].state)
                .nextSegment
            try directory.save(tx: tx, state: databases.state)
        }
        let previous = environment.durability
        try environment.setDurability(.bulk)
        defer { try? environment.setDurability(previous) }

        // Items first; each item that exists at the end is then indexed once.
        projector.beginDeferredReplay(holdingRecords: holdingRecords)
        var applied: UInt64 = 0
        let total = try head()
        // The events there are now are read and decoded on another thread while this one
        // applies them; those appended meanwhile are applied at the switch below.
        let events = LogReadAhead(environment: environment, database: schema.events, from: 1, through: total)
        defer { events.cancel() }
        while true {
            // `applied` moves only once the chunk committed: a retried write starts it again.
            let end = try environment.write { tx -> UInt64 in
                let end = try replayChunk(
                    from: applied + 1, into: projector, tx: tx, limit: configuration.rebuildChunkEvents,
                    events: events
                ).last
                if end > applied { try projector.checkpoint(through: end, tx: tx) }
                return end
            }
            events.commit()
            try projector.replayChunkCommitted(in: environment)
            guard end > applied else { break }
            applied = end
            progress?(Progress(processed: applied, total: max(total, applied)))
        }
        try projector.indexItemsAfterReplay(in: environment)
        try projector.indexLiveItems(in: environment)
        try environment.setDurability(previous)
        try environment.write { tx in
            // Events another process appended meanwhile (indexed as they are applied), then the switch.
            let end = try replayRest(from: applied + 1, into: projector, tx: tx)
            try projector.checkpoint(through: max(end, applied), tx: tx)
            try Meta.setUInt64(tx, schema.meta, Meta.generation, UInt64(target))
            try Meta.setRebuildNeeded(tx, schema.meta, false)
            for (_, database) in schema.generations[active].all { try tx.removeAll(in: database) }
        }
        try environment.sync(force: true)
        logger.info(
            "projections rebuilt",
            metadata: [
                "events": "\(applied)", "seconds": "\(String(format: "%.2f", Date().timeIntervalSince(started)))",
            ])
    }

    /// Applies the next events of `events`, which start at `from` (at most `limit` of them), that
    /// pass `include` into `projector`; returns the last seq taken and how many were applied. A
    /// transaction that runs again takes the same events again (``LogReadAhead/rewind()``).
    func replayChunk(
        from: UInt64, into projector: ProjectionWriter, tx: WriteTransaction, limit: UInt64, events: LogReadAhead,
        include: (Event) -> Bool = { _ in true }
    ) throws -> (last: UInt64, applied: UInt64) {
        try projector.beginReplayChunk()
        events.rewind()
        var last = from - 1
        var count: UInt64 = 0
        var applied: UInt64 = 0
        while count < limit,
            let seq = try events.next({ logged in
                if include(logged.event) {
                    try projector.apply(logged.event, bytes: logged.bytes, tx: tx)
                    applied += 1
                }
                return logged.seq
            })
        {
            last = seq
            count += 1
        }
        return (last, applied)
    }

    /// Applies the log's events from `from` on, read in `tx`, into `projector`; returns the last
    /// seq applied.
    func replayRest(from: UInt64, into projector: ProjectionWriter, tx: WriteTransaction) throws -> UInt64 {
        try projector.beginReplayChunk()
        var last = from - 1
        try Keys.seq(from).withUnsafeBytes { start in
            try tx.forEach(in: schema.events, from: start) { key, value in
                let seq = try Keys.seq(from: key)
                try projector.apply(try Event(decoding: value, seq: seq), bytes: value.count, tx: tx)
                last = seq
                return true
            }
        }
        return last
    }
}
