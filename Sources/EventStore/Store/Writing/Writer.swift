import Foundation
import LMDB
import Synchronization

/// The single writer: one thread that owns every write transaction and group-commits the
/// requests of concurrent callers.
///
/// Callers enqueue requests and wait. The thread takes every pending request (up to
/// ``Store/Configuration/groupCommitMaxEvents`` events), runs each in a nested transaction of
/// one write transaction, and commits once: one `fsync` pays for the whole group. A request that
/// throws is rolled back alone; the others commit. Each caller resumes only after the commit
/// holding its events is durable.
///
/// Callers that write one event at a time come back as their commit completes, one after the
/// other, while the writer would already start the next commit with those that arrived first.
/// So before a commit the writer waits, briefly (see ``gather(expected:)``), until as many
/// requests are pending as the previous commit served: 32 threads appending one event at a time
/// then share commits of 31 events on average instead of 27.
final class Writer: @unchecked Sendable {
    /// A unit of work for the writer thread.
    struct Request: Sendable {
        let eventCount: Int
        let body: @Sendable (StoreWriter) throws -> Void
        let complete: @Sendable (Result<Void, any Error>) -> Void
        /// Work that manages its own transactions (rebuilds); it runs alone.
        var exclusive: (@Sendable (Store) throws -> Void)? = nil
    }

    private struct Queue {
        var pending: [Request] = []
        var stopped = false
    }

    private let queue = Mutex(Queue())
    private let condition = NSCondition()
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// Set once by the store before the first request; read only on the writer thread.
    weak var store: Store?

    init(label: String) {
        // The thread keeps the writer alive until its loop ends, even when the store is released
        // on the writer thread itself.
        let thread = Thread { self.run() }
        thread.name = label
        thread.stackSize = 8 << 20
        self.thread = thread
        thread.start()
    }

    var isStopped: Bool { queue.withLock { $0.stopped } }

    /// Enqueues a request; fails it at once when the writer is stopped.
    func submit(_ request: Request) {
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.stopped else { return false }
            queue.pending.append(request)
            return true
        }
        guard accepted else {
            request.complete(.failure(EventStoreError(.closed, "the store is closed")))
            return
        }
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Finishes the pending requests, then ends the thread.
    func stop() {
        let wasRunning = queue.withLock { queue -> Bool in
            defer { queue.stopped = true }
            return !queue.stopped
        }
        guard wasRunning else { return }
        condition.lock()
        condition.signal()
        condition.unlock()
        if Thread.current != thread { finished.wait() }
    }

    private func takeGroup(maxEvents: Int) -> (group: [Request], stopped: Bool) {
        queue.withLock { queue in
            var taken = 0
            var events = 0
            while taken < queue.pending.count {
                if queue.pending[taken].exclusive != nil {
                    if taken == 0 { taken = 1 }
                    break
                }
                let next = queue.pending[taken].eventCount
                if taken > 0 && events + next > maxEvents { break }
                events += next
                taken += 1
            }
            let group = Array(queue.pending.prefix(taken))
            queue.pending.removeFirst(taken)
            return (group, queue.stopped)
        }
    }

    /// How long the writer waits for more requests after the last one arrived, and at most in
    /// all, before a commit that has fewer requests than the previous one served.
    static let gatherPause: TimeInterval = 0.000_3
    static let gatherLimit: TimeInterval = 0.002

    /// Waits until `expected` requests are pending, while they keep arriving: at most
    /// ``gatherPause`` after the last arrival and ``gatherLimit`` in all. Returns at once when
    /// none or at least `expected` are pending, when an exclusive request is first in line, or
    /// when the writer stops. A single caller (`expected` 1) never waits.
    private func gather(expected: Int) {
        guard expected > 1 else { return }
        let start = Date()
        var seen = 0
        var lastArrival = start
        condition.lock()
        defer { condition.unlock() }
        while true {
            let pending = queue.withLock { queue -> Int? in
                guard !queue.stopped, let first = queue.pending.first, first.exclusive == nil else { return nil }
                return queue.pending.count
            }
            guard let pending, pending < expected else { return }
            let now = Date()
            if pending > seen {
                seen = pending
                lastArrival = now
            }
            let deadline = min(
                lastArrival.addingTimeInterval(Writer.gatherPause), start.addingTimeInterval(Writer.gatherLimit))
            guard deadline > now else { return }
            _ = condition.wait(until: deadline)
        }
    }

    private func run() {
        var served = 0
        while true {
            let maxEvents = store?.configuration.groupCommitMaxEvents ?? 10_000
            gather(expected: served)
            let (group, stopped) = takeGroup(maxEvents: maxEvents)
            if !group.isEmpty { served = group.count }
            if group.isEmpty {
                if stopped { break }
                condition.lock()
                if queue.withLock({ $0.pending.isEmpty && !$0.stopped }) { condition.wait() }
                condition.unlock()
                continue
            }
            guard let store else {
                for request in group { request.complete(.failure(EventStoreError(.closed, "the store is closed"))) }
                continue
            }
            if let exclusive = group[0].exclusive {
                do {
                    try exclusive(store)
                    group[0].complete(.success(()))
                } catch {
                    group[0].complete(.failure(EventStoreError.wrapping(error, "write")))
                }
                continue
            }
            perform(group, store: store)
        }
        finished.signal()
    }

    private func perform(_ group: [Request], store: Store) {
        var outcomes: [Result<Void, any Error>] = []
        do {
            let head = try store.environment.write { tx -> UInt64 in
                outcomes = []
                let session = try WriteSession(store: store, tx: tx)
                if group.count == 1 {
                    try group[0].body(StoreWriter(tx: tx, session: session))
                    outcomes.append(.success(()))
                } else {
                    for request in group {
                        let snapshot = session.state
                        let counters = session.projections.counters
                        do {
                            try tx.nested { child in try request.body(StoreWriter(tx: child, session: session)) }
                            outcomes.append(.success(()))
                        } catch LMDBError.mapFull {
                            throw LMDBError.mapFull
                        } catch {
                            session.state = snapshot
                            session.projections.counters = counters
                            outcomes.append(.failure(EventStoreError.wrapping(error, "write")))
                        }
                    }
                }
                try session.finish()
                return session.state.head
            }
            store.commits.publish(head: head)
            store.mergeAhead?.committed()
        } catch {
            let failure = EventStoreError.wrapping(error, "commit")
            outcomes = group.map { _ in .failure(failure) }
        }
        for (request, outcome) in zip(group, outcomes) { request.complete(outcome) }
    }
}
