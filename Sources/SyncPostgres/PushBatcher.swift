import EventStore
import EventSync
import EventSyncService
import Synchronization

/// Gathers the pushes that wait for one store on this instance, so that one transaction applies
/// them all (group commit, as the LMDB backend's store writer does).
///
/// Pushes to one store take turns under the store's row lock, and each turn costs round trips and a
/// commit. The first push to a store that has no transaction running starts one; pushes that arrive
/// meanwhile queue, and the next transaction takes every queued push (up to ``maxPushes`` pushes,
/// ``maxEvents`` events and ``maxBytes`` bytes of events, at least one: pushes of large events
/// never add up to a statement PostgreSQL refuses, a bind message being at most 1 GB, or one that
/// outlasts the request timeout of everyone batched with them). Each push of a batch is applied on
/// its own copy of the store's state, so one that fails (a conflicting event, a replica it may not
/// claim) fails alone and leaves nothing; the others commit together.
final class PushBatcher: Sendable {
    /// Which queue a push waits in.
    struct Key: Hashable, Sendable {
        var store: String
        var create: Bool
    }

    /// Applies a batch of pushes in one transaction: one result per push, in order.
    typealias Apply = @Sendable ([CheckedPush]) async -> [Result<PushOutcome, SyncError>]

    private struct Waiting: Sendable {
        var id: UInt64
        var push: CheckedPush
        /// The bytes of its encoded events.
        var bytes: Int
        /// When it stops waiting: a push not taken by then is answered `unavailable`.
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<PushOutcome, any Error>
    }

    private struct State {
        /// The pushes waiting, by store; a key is present while the store's batches run.
        var queues: [Key: [Waiting]] = [:]
        /// The bytes of every push waiting, of every store.
        var queuedBytes = 0
        var transactions = 0
        var nextID: UInt64 = 0
        /// What answers each queued push when it waited too long (see ``expireOverdue(_:)``).
        var timers: [UInt64: Task<Void, Never>] = [:]
    }

    /// The most pushes one transaction applies.
    let maxPushes: Int
    /// The most events one transaction applies (a single larger push still runs, alone).
    let maxEvents: Int
    /// The most bytes of encoded events one transaction applies (a single larger push still
    /// runs, alone).
    let maxBytes: Int
    /// The most bytes of encoded events that wait, all stores together: a push that would pass
    /// it is answered `unavailable` at once (the client retries), so a flood of pushes while the
    /// database is slow cannot exhaust the server's memory. A push larger than this still waits
    /// when nothing else does.
    let maxQueuedBytes: Int
    /// How long a push waits for its transaction to start.
    let maxWait: Duration
    /// The time, and a wait on it (a test's clock may run ahead of the machine's).
    private let now: @Sendable () -> ContinuousClock.Instant
    private let sleep: @Sendable (Duration) async -> Void
    private let state = Mutex(State())

    init(
        maxPushes: Int = 256, maxEvents: Int = 10_000, maxBytes: Int = 32 << 20, maxQueuedBytes: Int = 256 << 20,
        maxWait: Duration = .seconds(10), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) {
        self.maxPushes = max(maxPushes, 1)
        self.maxEvents = max(maxEvents, 1)
        self.maxBytes = max(maxBytes, 1)
        self.maxQueuedBytes = max(maxQueuedBytes, 1)
        self.maxWait = maxWait
        self.now = now
        self.sleep = sleep
    }

    /// How many batches ran (for tests and logs).
    var transactions: Int { state.withLock { $0.transactions } }

    /// How many pushes wait for `key`'s next transaction (for tests).
    func waiting(for key: Key) -> Int {
        state.withLock { $0.queues[key]?.count ?? 0 }
    }

    /// The bytes of every push waiting (for tests).
    var queuedBytes: Int { state.withLock { $0.queuedBytes } }

    /// Applies `push` in one of its store's next transactions, run by `apply`.
    ///
    /// - Throws: ``EventSync/SyncError/Code/unavailable`` when the pushes waiting already hold
    ///   ``maxQueuedBytes``, when the push waited ``maxWait`` without its transaction starting, or
    ///   when the caller's task is cancelled while the push waits (in the last two cases it is
    ///   never applied).
    func submit(_ push: CheckedPush, to key: Key, apply: @escaping Apply) async throws -> PushOutcome {
        let bytes = push.events.reduce(0) { $0 + $1.byteCount }
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        enum Admission { case leads, queued, full, cancelled }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let waiting = Waiting(
                    id: id, push: push, bytes: bytes, deadline: now() + maxWait, continuation: continuation)
                let admission = state.withLock { state -> Admission in
                    // Under the lock the cancellation handler takes: a task cancelled before this
                    // never queues, one cancelled after it is found in the queue.
                    if Task.isCancelled { return .cancelled }
                    if state.queuedBytes > 0, state.queuedBytes + bytes > maxQueuedBytes { return .full }
                    state.queuedBytes += bytes
                    if state.queues[key] == nil {
                        state.queues[key] = [waiting]
                        return .leads
                    }
                    state.queues[key]!.append(waiting)
                    return .queued
                }
                switch admission {
                case .leads: Task { await self.drain(key, apply: apply) }
                case .queued: startTimer(id, key)
                case .cancelled: continuation.resume(throwing: PushBatcher.cancelled)
                case .full:
                    continuation.resume(
                        throwing: SyncError(
                            .unavailable,
                            "the server is busy: \(maxQueuedBytes >> 20) MiB of pushes wait for the database; retry later"
                        ))
                }
            }
        } onCancel: {
            let removed = state.withLock { state -> (Waiting, Task<Void, Never>?)? in
                guard let index = state.queues[key]?.firstIndex(where: { $0.id == id }) else { return nil }
                let waiting = state.queues[key]!.remove(at: index)
                state.queuedBytes -= waiting.bytes
                return (waiting, state.timers.removeValue(forKey: id))
            }
            removed?.1?.cancel()
            removed?.0.continuation.resume(throwing: PushBatcher.cancelled)
        }
    }

    /// Answers a queued push `unavailable` once it waited ``maxWait``, also while the
    /// transaction ahead of it still runs.
    private func startTimer(_ id: UInt64, _ key: Key) {
        let timer = Task { [maxWait, sleep] in
            await sleep(maxWait)
            guard !Task.isCancelled else { return }
            expireOverdue(key)
        }
        let queued = state.withLock { state in
            guard state.queues[key]?.contains(where: { $0.id == id }) == true else { return false }
            state.timers[id] = timer
            return true
        }
        // Taken (or gone) before its timer was kept.
        if !queued { timer.cancel() }
    }

    /// Answers `unavailable` every push of `key`'s queue that waited past its deadline. Pushes
    /// queue in the order of their deadlines, so those are the first ones.
    func expireOverdue(_ key: Key) {
        let now = now()
        let expired = state.withLock { state -> [(Waiting, Task<Void, Never>?)] in
            guard let queue = state.queues[key] else { return [] }
            let count = queue.prefix { $0.deadline < now }.count
            guard count > 0 else { return [] }
            state.queues[key] = Array(queue[count...])
            return queue[..<count].map { waiting in
                state.queuedBytes -= waiting.bytes
                return (waiting, state.timers.removeValue(forKey: waiting.id))
            }
        }
        for (waiting, timer) in expired {
            timer?.cancel()
            waiting.continuation.resume(throwing: expiredError)
        }
    }

    /// What a push that waited ``maxWait`` without its transaction starting gets.
    private var expiredError: SyncError {
        SyncError(
            .unavailable,
            "the push waited \(maxWait.components.seconds) s for the database without being applied; retry")
    }

    /// What a push whose request was cancelled while it waited gets: it was not applied.
    static let cancelled = SyncError(.unavailable, "the push was cancelled before it was applied; retry")

    /// Runs `key`'s batches until its queue is empty.
    private func drain(_ key: Key, apply: Apply) async {
        while let batch = next(key) {
            guard !batch.isEmpty else { continue }
            let results = await apply(batch.map(\.push))
            for (index, waiting) in batch.enumerated() {
                let result =
                    index < results.count
                    ? results[index] : .failure(SyncError(.internalError, "a batched push got no result"))
                waiting.continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }

    /// Takes the next batch from `key`'s queue (empty when every push left waited too long:
    /// those are answered here), or ends the queue when it is empty.
    private func next(_ key: Key) -> [Waiting]? {
        let now = now()
        let (batch, expired, timers) = state.withLock { state -> ([Waiting]?, [Waiting], [Task<Void, Never>]) in
            guard let waiting = state.queues[key], !waiting.isEmpty else {
                state.queues[key] = nil
                return (nil, [], [])
            }
            let expired = waiting.filter { $0.deadline < now }
            let queue = expired.isEmpty ? waiting : waiting.filter { $0.deadline >= now }
            var taken = 0
            var events = 0
            var bytes = 0
            while taken < queue.count, taken < maxPushes {
                let count = queue[taken].push.events.count
                let size = queue[taken].bytes
                if taken > 0, events + count > maxEvents || bytes + size > maxBytes { break }
                events += count
                bytes += size
                taken += 1
            }
            state.queues[key] = Array(queue[taken...])
            state.queuedBytes -= bytes + expired.reduce(0) { $0 + $1.bytes }
            if taken > 0 { state.transactions += 1 }
            let left = queue[..<taken] + expired
            return (Array(queue[..<taken]), expired, left.compactMap { state.timers.removeValue(forKey: $0.id) })
        }
        for timer in timers { timer.cancel() }
        for waiting in expired { waiting.continuation.resume(throwing: expiredError) }
        return batch
    }
}
