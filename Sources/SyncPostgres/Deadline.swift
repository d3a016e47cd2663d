import Synchronization

/// Runs work against a time limit, answering at the limit whether or not the work has ended.
enum Deadline {
    /// The result of `body`, or `timeout()`'s error when `limit` passes first (then `body` is
    /// cancelled and left to end on its own). Cancelling the caller cancels `body`.
    static func race<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> T,
        timeout: @escaping @Sendable () -> any Error
    ) async throws -> T {
        let outcome = Outcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.start(continuation)
                let work = Task {
                    do {
                        outcome.finish(.success(try await body()))
                    } catch {
                        outcome.finish(.failure(error))
                    }
                }
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    if !Task.isCancelled, outcome.finish(.failure(timeout())) { work.cancel() }
                }
                outcome.onEnd {
                    work.cancel(); timer.cancel()
                }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// The one answer of a race, and what to stop when it is given.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var result: Result<T, any Error>?
            var stop: (@Sendable () -> Void)?
            var finished = false
        }

        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { state -> Result<T, any Error>? in
                guard let result = state.result else {
                    state.continuation = continuation
                    return nil
                }
                return result
            }
            if let early { continuation.resume(with: early) }
        }

        /// Gives the answer if none was given; returns whether this one was.
        @discardableResult
        func finish(_ result: Result<T, any Error>) -> Bool {
            let (continuation, stop, first) = state.withLock {
                state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?, Bool) in
                guard !state.finished else { return (nil, nil, false) }
                state.finished = true
                state.result = result
                defer {
                    state.continuation = nil
                    state.stop = nil
                }
                return (state.continuation, state.stop, true)
            }
            continuation?.resume(with: result)
            stop?()
            return first
        }

        /// Calls `stop` when the answer is given (at once if it was).
        func onEnd(_ stop: @escaping @Sendable () -> Void) {
            let finished = state.withLock { state -> Bool in
                if state.finished { return true }
                state.stop = stop
                return false
            }
            if finished { stop() }
        }
    }
}
