import Synchronization

/// Wakes change-stream readers after each commit.
final class CommitSignal: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<UInt64>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }
    private let state = Mutex(State())

    /// A stream of heads, keeping only the newest unread one.
    func subscribe() -> AsyncStream<UInt64> {
        let (stream, continuation) = AsyncStream<UInt64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(head: UInt64) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(head) }
    }

    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<UInt64>.Continuation] in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
