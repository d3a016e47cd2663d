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
        var push: CheckedPush
        var continuation: CheckedContinuation<PushOutcome, any Error>
    }

    private struct State {
        /// The pushes waiting, by store; a key is present while the store's batches run.
        var queues: [Key: [Waiting]] = [:]
        var transactions = 0
    }

    /// The most pushes one transaction applies.
    let maxPushes: Int
    /// The most events one transaction applies (a single larger push still runs, alone).
    let maxEvents: Int
    /// The most bytes of encoded events one transaction applies (a single larger push still
    /// runs, alone).
    let maxBytes: Int
    private let state = Mutex(State())

    init(maxPushes: Int = 256, maxEvents: Int = 10_000, maxBytes: Int = 32 << 20) {
        self.maxPushes = max(maxPushes, 1)
        self.maxEvents = max(maxEvents, 1)
        self.maxBytes = max(maxBytes, 1)
    }

    /// How many batches ran (for tests and logs).
    var transactions: Int { state.withLock { $0.transactions } }

    /// How many pushes wait for `key`'s next transaction (for tests).
    func waiting(for key: Key) -> Int {
        state.withLock { $0.queues[key]?.count ?? 0 }
    }

    /// Applies `push` in one of its store's next transactions, run by `apply`.
    func submit(_ push: CheckedPush, to key: Key, apply: @escaping Apply) async throws -> PushOutcome {
        try await withCheckedThrowingContinuation { continuation in
            let waiting = Waiting(push: push, continuation: continuation)
            let leads = state.withLock { state -> Bool in
                if state.queues[key] == nil {
                    state.queues[key] = [waiting]
                    return true
                }
                state.queues[key]!.append(waiting)
                return false
            }
            if leads { Task { await self.drain(key, apply: apply) } }
        }
    }

    /// Runs `key`'s batches until its queue is empty.
    private func drain(_ key: Key, apply: Apply) async {
        while let batch = next(key) {
            let results = await apply(batch.map(\.push))
            for (index, waiting) in batch.enumerated() {
                let result =
                    index < results.count
                    ? results[index] : .failure(SyncError(.internalError, "a batched push got no result"))
                waiting.continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }

    /// Takes the next batch from `key`'s queue, or ends the queue when it is empty.
    private func next(_ key: Key) -> [Waiting]? {
        state.withLock { state in
            guard let queue = state.queues[key], !queue.isEmpty else {
                state.queues[key] = nil
                return nil
            }
            var taken = 0
            var events = 0
            var bytes = 0
            while taken < queue.count, taken < maxPushes {
                let count = queue[taken].push.events.count
                let size = queue[taken].push.events.reduce(0) { $0 + $1.byteCount }
                if taken > 0, events + count > maxEvents || bytes + size > maxBytes { break }
                events += count
                bytes += size
                taken += 1
            }
            state.queues[key] = Array(queue[taken...])
            state.transactions += 1
            return Array(queue[..<taken])
        }
    }
}
