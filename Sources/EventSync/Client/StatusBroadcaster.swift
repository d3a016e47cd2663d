import Synchronization

/// Fans status changes out to every subscriber, each stream starting with the current state.
final class StatusBroadcaster: Sendable {
    private struct State {
        var current: SyncStatus
        var subscribers: [UInt64: AsyncStream<SyncStatus>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    init(_ initial: SyncStatus) {
        state = Mutex(State(current: initial))
    }

    deinit {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.finish() }
    }

    var current: SyncStatus { state.withLock { $0.current } }

    func subscribe() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            continuation.yield(state.current)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes the current phase with new pending counts.
    func publishPending(events: Int, items: Int) {
        state.withLock { state in
            state.current.pendingCount = events
            state.current.pendingItems = items
            for subscriber in state.subscribers.values { subscriber.yield(state.current) }
        }
    }

    func publish(_ status: SyncStatus) {
        state.withLock { state in
            state.current = status
            for subscriber in state.subscribers.values { subscriber.yield(status) }
        }
    }
}
