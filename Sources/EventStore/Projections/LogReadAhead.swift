import Dispatch
import LMDB
import Synchronization

/// Reads and decodes the log ahead of a replay, on a thread of its own, so that the writer
/// thread only applies events (a rebuild's writer spent about a quarter of its time decoding
/// them, with the second core idle until the search index was built).
///
/// The events `from...through` are read in batches of ``batchEvents``, each in a short read
/// transaction of its own (a snapshot held for the whole replay would keep every page the
/// replay's commits free from being reused), at most ``depth`` batches ahead of the replay.
/// They come out in log order through ``next()``; a batch that fails to read or decode ends the
/// sequence with its error, at the event where it failed.
///
/// A replay chunk whose transaction runs again (the map grew) starts again from the events it
/// took: ``rewind()`` goes back to the last ``commit()``, and the events taken since then are
/// kept until it.
///
/// Thread safety: `queue` is serial and alone runs the reads; `ready` hands their results over.
/// One thread (the writer) calls the other methods.
final class LogReadAhead: @unchecked Sendable {
    /// One event as the log holds it: its seq, the event decoded and its size in the log.
    struct Logged: Sendable {
        var seq: UInt64
        var event: Event
        var bytes: Int
    }

    private struct Batch: Sendable {
        var events: [Logged]
        /// Whether the batch ends the range: it reached `through` or the log's end, or failed.
        var isLast: Bool
        var failure: (any Error)?
    }

    /// Events a batch reads in one transaction.
    static let batchEvents = 1_024
    /// Batches read ahead of the replay.
    static let depth = 4

    private let environment: Environment
    private let database: Database
    private let through: UInt64
    private let queue = DispatchQueue(label: "EventStore.readAhead", qos: .userInitiated)
    /// The batches read and not yet taken, in order.
    private let ready = Mutex<[Batch]>([])
    private let readyCount = DispatchSemaphore(value: 0)
    /// Set to stop reading: the replay ended early.
    private let cancelled = Atomic<Bool>(false)

    /// The seq the next batch starts from (touched only by blocks on `queue`).
    private var nextRead: UInt64
    /// Whether the batch that ends the range has been taken, and the error it ended with.
    private var ended = false
    private var failure: (any Error)?

    /// The events taken since the last ``commit()``, and how many of them the current attempt
    /// has applied.
    private var taken: [Logged] = []
    private var position = 0

    /// Starts reading the events `from...through` of `database` (the log).
    init(environment: Environment, database: Database, from: UInt64, through: UInt64) {
        self.environment = environment
        self.database = database
        self.through = through
        nextRead = from
        ended = from > through
        for _ in 0..<LogReadAhead.depth { request() }
    }

    /// Stops reading and waits for the read under way. (Its blocks hold the value: it goes away
    /// only after the last of them, so it needs no cancelling then.)
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        queue.sync {}
    }

    /// Asks the queue for the next batch.
    private func request() {
        queue.async { [self] in
            let batch = readBatch()
            ready.withLock { $0.append(batch) }
            readyCount.signal()
        }
    }

    /// Reads the next batch from `nextRead` (on `queue`).
    private func readBatch() -> Batch {
        guard !cancelled.load(ordering: .relaxed), nextRead <= through else {
            return Batch(events: [], isLast: true, failure: nil)
        }
        var events: [Logged] = []
        events.reserveCapacity(LogReadAhead.batchEvents)
        var failure: (any Error)?
        var atEnd = true
        do {
            try environment.read { tx in
                try Keys.seq(nextRead).withUnsafeBytes { start in
                    try tx.forEach(in: database, from: start) { key, value in
                        let seq = try Keys.seq(from: key)
                        guard seq <= through else { return false }
                        guard events.count < LogReadAhead.batchEvents else {
                            atEnd = false
                            return false
                        }
                        events.append(Logged(seq: seq, event: try Event(decoding: value, seq: seq), bytes: value.count))
                        return true
                    }
                }
            }
        } catch {
            failure = error
        }
        if let last = events.last { nextRead = last.seq + 1 }
        if failure != nil || atEnd { nextRead = through + 1 }
        return Batch(events: events, isLast: failure != nil || atEnd, failure: failure)
    }

    /// Runs `body` with the next event and returns what it returns, or `nil` after the last
    /// event. The event is lent, not copied.
    ///
    /// - Throws: The error that reading or decoding the event raised, once the events before it
    ///   were taken, or what `body` throws.
    func next<T>(_ body: (borrowing Logged) throws -> T) throws -> T? {
        while position == taken.count {
            if ended {
                if let failure { throw failure }
                return nil
            }
            take()
        }
        position += 1
        return try body(taken[position - 1])
    }

    /// Waits for the next batch, adds its events to `taken` and asks for another.
    private func take() {
        readyCount.wait()
        let batch = ready.withLock { $0.removeFirst() }
        taken.append(contentsOf: batch.events)
        if batch.isLast {
            ended = true
            failure = batch.failure
        } else {
            request()
        }
    }

    /// Goes back to the first event taken since the last ``commit()``: the transaction that
    /// applied them was aborted and runs again.
    func rewind() {
        position = 0
    }

    /// Forgets the events applied so far: their transaction committed. They are freed on the
    /// reading thread, which allocated them.
    func commit() {
        let applied = taken
        taken = Array(applied[position...])
        position = 0
        queue.async { withExtendedLifetime(applied) {} }
    }
}
