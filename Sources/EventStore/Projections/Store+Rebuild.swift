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
    /// - Parameter progress: Called as the replay goes on (after each chunk of each pass over
    ///   the log, see <doc:Projections>), with the events processed so far.
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

    /// The most rounds of reading the log a rebuild makes: one for the log as it found it, then
    /// one for each batch of events another process appended meanwhile.
    private static let rebuildReadRounds = 4

    /// How often a replay that holds item records starts over holding them when a write of it
    /// runs again (``ReplayRestart``; the map has grown meanwhile, so a second attempt rarely
    /// meets it again) before it starts over without holding any.
    static let replayAttemptsHoldingRecords = 2

    /// Runs `replay`, a replay that holds item records (`holdingRecords` true), again when a
    /// write of it runs again (``ReplayRestart``), ``replayAttemptsHoldingRecords`` times in
    /// all, then once holding none; calls `startingOver` before each new attempt with whether it
    /// holds records. `replay` gets `progress` passed on only past what it reported before, so
    /// that an attempt that starts over does not report going back, nor one update twice.
    static func attemptingReplay<T>(
        progress: (@Sendable (Progress) -> Void)?, startingOver: (_ holdingRecords: Bool) throws -> Void,
        _ replay: (_ holdingRecords: Bool, _ progress: (@Sendable (Progress) -> Void)?) throws -> T
    ) throws -> T {
        let furthest = Mutex<UInt64?>(nil)
        let progress = progress.map { progress in
            { @Sendable (update: Progress) in
                let ahead = furthest.withLock { furthest in
                    guard furthest.map({ update.processed > $0 }) ?? true else { return false }
                    furthest = update.processed
                    return true
                }
                if ahead { progress(update) }
            }
        }
        for attempt in 1...replayAttemptsHoldingRecords {
            do {
                return try replay(true, progress)
            } catch is ReplayRestart {
                try startingOver(attempt < replayAttemptsHoldingRecords)
            }
        }
        return try replay(false, progress)
    }

    /// Runs on the writer thread.
    func performRebuild(progress: (@Sendable (Progress) -> Void)?) throws {
        try Store.attemptingReplay(progress: progress) { holding in
            logger.notice(
                "a rebuild's write ran again (the map grew or was resized): rebuilding \(holding ? "again" : "without holding items in memory")"
            )
        } _: { holdingRecords, progress in
            try performRebuild(holdingRecords: holdingRecords, progress: progress)
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

        // Items first, in passes over the log when they do not all fit in memory; each item
        // that exists at the end of its pass is then indexed once. The log is read and decoded
        // on another thread while this one applies it.
        projector.beginDeferredReplay(holdingRecords: holdingRecords)
        let through = try head()
        var applied = try replayInPasses(
            through: through, snapshot: nil, into: projector, in: environment, holdingRecords: holdingRecords
        ) { processed in
            progress?(Progress(processed: processed, total: through))
        }.last
        try projector.indexItemsAfterReplay(in: environment)
        projector.endDeferredReplay()
        // Events another process appended meanwhile are read by another round (a few at most),
        // applied and indexed as a commit applies them; the rest are applied at the switch below.
        var total = try head()
        var rounds = 1
        while total > applied && rounds < Store.rebuildReadRounds {
            let events = LogReadAhead(
                environment: environment, database: schema.events, from: applied + 1, through: total)
            defer { events.cancel() }
            let through = total
            applied = try replayChunks(events, into: projector, in: environment, after: applied) { last in
                progress?(Progress(processed: last, total: max(through, last)))
            }.last
            total = try head()
            rounds += 1
        }
        try environment.setDurability(previous)
        try environment.write { tx in
            // Events another process appended meanwhile (indexed as they are applied), then the switch.
            let end = try replayRest(from: applied + 1, into: projector, tx: tx)
            try projector.checkpoint(through: max(end, applied), tx: tx)
            try Meta.setUInt64(tx, schema.meta, Meta.generation, UInt64(target))
            try Meta.setRebuildNeeded(tx, schema.meta, false)
            try markUnregisteredProjectionsStale(tx)
            for (_, database) in schema.generations[active].all { try tx.removeAll(in: database) }
        }
        try environment.sync(force: true)
        logger.info(
            "projections rebuilt",
            metadata: [
                "events": "\(applied)", "seconds": "\(String(format: "%.2f", Date().timeIntervalSince(started)))",
            ])
    }

    /// Replays the log's events `1...through` that pass `include` into `projector`, which
    /// defers search (``ProjectionWriter/beginDeferredReplay(holdingRecords:)``): in the passes
    /// ``ReplayPasses`` plans from the active generation when the projector holds item records
    /// and can replay in passes, else in one, each pass followed by the indexing of its items
    /// (``ProjectionWriter/indexReplayedItems(_:in:)``); then checkpoints through the last seq
    /// read. Reads every event from `snapshot`, on this thread, when given. Calls `progress`
    /// with the events processed (a pass over the whole log counts as its share of them; the
    /// caller drops repeats, see ``attemptingReplay(progress:startingOver:_:)``).
    ///
    /// - Returns: The last seq read (0 for an empty log), how many events passed `include`, and
    ///   the number of passes.
    func replayInPasses(
        through: UInt64, snapshot: ReadTransaction?, into projector: ProjectionWriter, in environment: Environment,
        holdingRecords: Bool, include: (Event) -> Bool = { _ in true }, progress: (UInt64) -> Void
    ) throws -> (last: UInt64, applied: UInt64, passes: Int) {
        var passes = ReplayPasses.single
        if holdingRecords && projector.replaysInPasses {
            let plan = { (tx: ReadTransaction) in
                try ReplayPasses.plan(
                    items: self.schema.generations[try StoreReader.activeGeneration(tx, self.schema)].items,
                    events: self.schema.events, tx: tx, limit: projector.replayRecordLimit,
                    byteLimit: projector.replayRecordBytes)
            }
            passes = try snapshot.map(plan) ?? self.environment.read(plan)
            if passes.ranges.count > 1 {
                logger.info(
                    "the items do not fit in memory: replaying the log in passes, one range of items each",
                    metadata: ["passes": "\(passes.ranges.count)"])
            }
        }
        var last: UInt64 = 0
        var applied: UInt64 = 0
        let count = UInt64(passes.ranges.count)
        for (pass, range) in passes.ranges.enumerated() {
            projector.beginReplayPass()
            let events =
                if let snapshot {
                    LogReadAhead(snapshot: snapshot, database: schema.events, from: 1, through: through, keys: range)
                } else {
                    LogReadAhead(
                        environment: self.environment, database: schema.events, from: 1, through: through, keys: range)
                }
            defer { events.cancel() }
            let done = UInt64(pass) * through
            let replayed = try replayChunks(events, into: projector, in: environment, after: 0, include: include) {
                progress((done + $0) / count)
            }
            last = max(last, replayed.last)
            applied += replayed.applied
            try projector.indexReplayedItems(range, in: environment)
        }
        try environment.write { tx in try projector.checkpoint(through: last, tx: tx) }
        if last > 0 { progress(last) }
        return (last, applied, passes.ranges.count)
    }

    /// Applies the events `events` reads, those that pass `include`, to `projector`: a chunk at
    /// a time (at most ``Store/Configuration/rebuildChunkEvents`` events, or about
    /// ``LogReadAhead/chunkBytes`` of them, fewer when the reading thread falls behind), each in
    /// a write transaction of `environment` with its checkpoint. A transaction that runs again
    /// applies the chunk's events again. Calls `chunkDone` with the last seq of each chunk once it
    /// committed.
    ///
    /// - Returns: The last seq read (`after` when there was none) and how many events passed
    ///   `include`.
    func replayChunks(
        _ events: LogReadAhead, into projector: ProjectionWriter, in environment: Environment, after: UInt64,
        include: (Event) -> Bool = { _ in true }, chunkDone: (UInt64) -> Void
    ) throws -> (last: UInt64, applied: UInt64) {
        var last = after
        var applied: UInt64 = 0
        while try events.beginChunk() {
            let chunk = try environment.write { tx -> (last: UInt64, applied: UInt64) in
                try projector.beginReplayChunk()
                var chunk = (last: last, applied: UInt64(0))
                try events.forEachInChunk(
                    limit: Int(clamping: configuration.rebuildChunkEvents), bytes: LogReadAhead.chunkBytes
                ) { logged in
                    if include(logged.event) {
                        try projector.apply(logged.event, bytes: logged.bytes, tx: tx)
                        chunk.applied += 1
                    }
                    chunk.last = logged.seq
                }
                try projector.checkpoint(through: chunk.last, tx: tx)
                return chunk
            }
            events.commit()
            try projector.replayChunkCommitted(in: environment)
            last = chunk.last
            applied += chunk.applied
            chunkDone(last)
        }
        // The events after the last chunk's, up to the range's end, were read and skipped.
        return (max(last, events.lastRead), applied)
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
