import Dispatch
import LMDB
import Synchronization

/// Reads and decodes the log for a replay, ahead of it on a thread of its own, so that the
/// thread that replays only applies events (a rebuild's writer spent about a quarter of its time
/// decoding them, with the second core idle until the search index was built).
///
/// The replay takes the events a chunk at a time: ``beginChunk()`` waits, outside any
/// transaction, until the chunk's first events are read; the chunk's transaction applies them
/// and those read meanwhile (``forEachInChunk(limit:bytes:_:)``), again from the first if it
/// runs again; and ``commit()`` lets them go once it committed. The thread that replays never
/// waits for the reading thread inside a transaction (a chunk ends early instead): a read on
/// that thread may have to wait for the environment's resize lock (another process grew the
/// map), which a transaction holds.
///
/// The events `from...through` are read in batches (``batchEvents`` events, or
/// ``batchBytes`` of them), at most ``depth`` batches ahead, each in a short read transaction of
/// its own: a snapshot held for the whole replay would keep every page the replay's commits
/// free from being reused. A replay that must read one snapshot (a verify, which compares what it
/// builds with that snapshot's projections) reads it on its own thread instead
/// (``init(snapshot:database:from:through:keys:)``). A batch that fails to read or decode ends the
/// range with its error, which ``beginChunk()`` throws once the events before it were applied;
/// after ``cancel()`` the range ends with a `CancellationError`.
///
/// A replay in passes (``ReplayPasses``) reads only the events of one range of item keys: the
/// reading thread skips the others by the item key in their stored bytes, without decoding them.
///
/// Thread safety: `queue` is serial and alone runs the threaded reads; `ready` hands their
/// results over. One thread (the one that replays) calls the methods.
final class LogReadAhead: @unchecked Sendable {
    /// One event as the log holds it: its seq, the event decoded and its size in the log.
    struct Logged: Sendable {
        var seq: UInt64
        var event: Event
        var bytes: Int
    }

    private struct Batch: Sendable {
        var events: [Logged]
        /// The last seq the batch read, taken or skipped (0 when it read none).
        var lastRead: UInt64
        /// Whether the batch ends the range: it reached `through` or the log's end, or failed.
        var isLast: Bool
        var failure: (any Error)?
    }

    /// The most events, and about the most bytes of them, a batch reads in one transaction.
    static let batchEvents = 1_024
    static let batchBytes = 2 << 20
    /// Batches read ahead of the replay.
    static let depth = 8
    /// About the most bytes of events a chunk takes, whatever its count of events.
    static let chunkBytes = 8 << 20
    /// The most events a batch reads, taken or skipped, in its transaction.
    static let batchScan = 64 * batchEvents

    /// Where batches are read.
    private enum Source {
        /// On the queue's thread, each batch in a read transaction of the environment.
        case thread(Environment, DispatchQueue)
        /// From one snapshot, on the calling thread, when the replay needs them (it lives as long
        /// as the closure that lent it, which the replay does not outlast).
        case snapshot(ReadTransaction)
    }

    private let source: Source
    private let database: Database
    private let through: UInt64
    /// The item keys whose events are read; the others are skipped.
    private let keys: ItemKeyRange
    /// The batches read and not yet taken, in order.
    private let ready = Mutex<[Batch]>([])
    private let readyCount = DispatchSemaphore(value: 0)
    /// Set to stop reading: the replay ended early.
    private let cancelled = Atomic<Bool>(false)

    /// The seq the next batch starts from (touched only by the reads).
    private var nextRead: UInt64
    /// Whether the batch that ends the range has been taken, and the error it ended with.
    private var ended = false
    private var failure: (any Error)?
    /// The last seq of the range read so far, its event taken or skipped (0 before any).
    private(set) var lastRead: UInt64 = 0
    /// The events the chunk took (since the last ``commit()``), and their bytes.
    private var taken: [Logged] = []
    private var takenBytes = 0
    /// The events read and not yet taken (from `pendingStart` on), first in line for the chunk.
    private var pending: [Logged] = []
    private var pendingStart = 0

    /// Starts reading the events `from...through` of `database` (the log) on a thread of its
    /// own, each batch in a read transaction of its own; only those of the items in `keys`.
    init(environment: Environment, database: Database, from: UInt64, through: UInt64, keys: ItemKeyRange = .all) {
        self.database = database
        self.through = through
        self.keys = keys
        nextRead = from
        source = .thread(environment, DispatchQueue(label: "EventStore.readAhead", qos: .userInitiated))
        for _ in 0..<LogReadAhead.depth { request() }
    }

    /// Reads the events `from...through` of `database` from `snapshot`, on the calling thread,
    /// as the replay needs them; only those of the items in `keys`.
    init(snapshot: ReadTransaction, database: Database, from: UInt64, through: UInt64, keys: ItemKeyRange = .all) {
        self.database = database
        self.through = through
        self.keys = keys
        nextRead = from
        source = .snapshot(snapshot)
    }

    /// The reading thread's queue (`nil` when reading from one snapshot).
    private var queue: DispatchQueue? {
        if case .thread(_, let queue) = source { queue } else { nil }
    }

    /// Stops reading and waits for the read under way. (The reading thread's blocks hold this
    /// value: it goes away only after the last of them, so it needs no cancelling then.)
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        queue?.sync {}
    }

    /// Asks the queue for the next batch.
    private func request() {
        queue?.async { [self] in
            let batch = readBatch()
            ready.withLock { $0.append(batch) }
            readyCount.signal()
        }
    }

    /// Reads the next batch from `nextRead` (on the queue, or on the calling thread from the
    /// snapshot).
    private func readBatch() -> Batch {
        guard !cancelled.load(ordering: .relaxed) else {
            return Batch(events: [], lastRead: 0, isLast: true, failure: CancellationError())
        }
        guard nextRead <= through else { return Batch(events: [], lastRead: 0, isLast: true, failure: nil) }
        var events: [Logged] = []
        events.reserveCapacity(LogReadAhead.batchEvents)
        var bytes = 0
        var scanned = 0
        var lastRead: UInt64 = 0
        var itemKey: [UInt8] = []
        var failure: (any Error)?
        var atEnd = true
        let body = { [self] (tx: ReadTransaction) throws in
            try Keys.seq(nextRead).withUnsafeBytes { start in
                try tx.forEach(in: database, from: start) { key, value in
                    let seq = try Keys.seq(from: key)
                    guard seq <= through else { return false }
                    guard
                        events.count < LogReadAhead.batchEvents, bytes < LogReadAhead.batchBytes,
                        scanned < LogReadAhead.batchScan
                    else {
                        atEnd = false
                        return false
                    }
                    scanned += 1
                    lastRead = seq
                    // An event whose key cannot be read is taken, for its decoding to report it.
                    if !keys.isAll, (try? Event.itemKey(ofEncoded: value, into: &itemKey)) != nil,
                        !keys.contains(itemKey)
                    {
                        return true
                    }
                    events.append(Logged(seq: seq, event: try Event(decoding: value, seq: seq), bytes: value.count))
                    bytes += value.count
                    return true
                }
            }
        }
        do {
            switch source {
            case .thread(let environment, _): try environment.read(body)
            case .snapshot(let snapshot): try body(snapshot)
            }
        } catch {
            failure = error
        }
        if lastRead > 0 { nextRead = lastRead + 1 }
        if failure != nil || atEnd { nextRead = through + 1 }
        return Batch(events: events, lastRead: lastRead, isLast: failure != nil || atEnd, failure: failure)
    }

    /// Waits until the next chunk has its first events (or the range is done), outside any
    /// transaction.
    ///
    /// - Returns: Whether there is a next chunk; `false` once the range is done.
    /// - Throws: The error that ended the range, once no event before it is left to apply.
    func beginChunk() throws -> Bool {
        precondition(taken.isEmpty, "a chunk begins after the last one committed")
        // A batch of a pass can hold no event of its items.
        while pendingStart == pending.count && !ended { take(waiting: true) }
        if pendingStart == pending.count, let failure { throw failure }
        return pendingStart < pending.count
    }

    /// Runs `body` with each event of the chunk, in log order, the events lent, not copied: those
    /// the chunk took already (all of them again in a transaction that runs again), then those
    /// read since, up to `limit` events or about `byteLimit` of them. It never waits for the
    /// reading thread: the chunk ends where the events read so far end.
    func forEachInChunk(limit: Int, bytes byteLimit: Int, _ body: (borrowing Logged) throws -> Void) rethrows {
        var index = 0
        while true {
            if index == taken.count {
                guard taken.count < limit && takenBytes < byteLimit else { return }
                if pendingStart == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingStart = 0
                    guard !ended, take(waiting: false) else { return }
                    continue
                }
                takenBytes += pending[pendingStart].bytes
                taken.append(pending[pendingStart])
                pendingStart += 1
            }
            try body(taken[index])
            index += 1
        }
    }

    /// Adds the next batch's events to `pending` and asks for another unless the range ended:
    /// waiting for the reading thread when `waiting`, else only when it has one ready (on one
    /// snapshot, reads it). Returns whether it took a batch.
    @discardableResult
    private func take(waiting: Bool) -> Bool {
        let batch: Batch
        if queue == nil {
            batch = readBatch()
        } else {
            if waiting {
                readyCount.wait()
            } else if readyCount.wait(timeout: .now()) == .timedOut {
                return false
            }
            batch = ready.withLock { $0.removeFirst() }
        }
        pending.append(contentsOf: batch.events)
        lastRead = max(lastRead, batch.lastRead)
        if batch.isLast {
            ended = true
            failure = batch.failure
        } else {
            request()
        }
        return true
    }

    /// Lets the chunk's events go: its transaction committed. They are freed on the reading
    /// thread, which allocated them.
    func commit() {
        let applied = taken
        taken = []
        takenBytes = 0
        if let queue { queue.async { withExtendedLifetime(applied) {} } }
    }
}
