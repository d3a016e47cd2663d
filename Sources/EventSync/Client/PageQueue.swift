import Synchronization

/// A bounded queue between the task that fetches and checks pulled pages and the loop that
/// ingests them, so that the next pages are fetched, decoded and checked while the writer
/// ingests the current ones.
///
/// The bound is in bytes (the encoded events a page holds, what a catch-up commit's budget
/// counts): ``put(_:bytes:)`` waits while the queue holds `limit` bytes or more, so the queue
/// holds at most `limit` bytes plus one page. Either side may ``close()`` it: the other side's
/// wait then ends (``put(_:bytes:)`` returns `false`, ``take()`` returns `nil` once it is
/// empty). Cancelling a waiting task ends its wait the same way.
final class PageQueue<Element: Sendable>: Sendable {
    private struct State {
        /// A few pages at most: removing the first moves little.
        var elements: [(element: Element, bytes: Int)] = []
        var bytes = 0
        var closed = false
        /// The side waiting, if any, of each: a side is one task.
        var waiters: [Side: CheckedContinuation<Void, Never>] = [:]

        var isEmpty: Bool { elements.isEmpty }
    }

    private enum Side { case taker, putter }

    private let limit: Int
    private let state = Mutex(State())

    /// A queue that makes ``put(_:bytes:)`` wait once it holds `limit` bytes.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Adds `element`, first waiting while the queue is full; returns `false`, without adding it,
    /// when the queue was closed or the task cancelled.
    func put(_ element: Element, bytes: Int) async -> Bool {
        while true {
            let outcome = state.withLock { state -> Bool? in
                if state.closed || Task.isCancelled { return false }
                guard state.bytes < limit else { return nil }
                state.elements.append((element, bytes))
                state.bytes += bytes
                return true
            }
            if let outcome {
                if outcome { resume(.taker) }
                return outcome
            }
            await wait(as: .putter) { $0.closed || $0.bytes < self.limit }
        }
    }

    /// Removes the oldest element, first waiting while the queue is empty; `nil` once the queue
    /// is closed and empty, or when the task was cancelled.
    func take() async -> Element? {
        while true {
            let outcome = state.withLock { state -> (element: Element?, done: Bool) in
                if !state.isEmpty {
                    let (element, bytes) = state.elements.removeFirst()
                    state.bytes -= bytes
                    return (element, true)
                }
                return (nil, state.closed || Task.isCancelled)
            }
            if outcome.done {
                if outcome.element != nil { resume(.putter) }
                return outcome.element
            }
            await wait(as: .taker) { $0.closed || !$0.isEmpty }
        }
    }

    /// Closes the queue: no element is added any more, and both sides stop waiting.
    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Wakes `side` if it waits.
    private func resume(_ side: Side) {
        state.withLock { $0.waiters.removeValue(forKey: side) }?.resume()
    }

    /// Parks the calling task as `side` until `ready` holds, the other side wakes it, or the task
    /// is cancelled.
    private func wait(as side: Side, until ready: (State) -> Bool) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if ready(state) || Task.isCancelled { return true }
                    state.waiters[side] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            resume(side)
        }
    }
}
