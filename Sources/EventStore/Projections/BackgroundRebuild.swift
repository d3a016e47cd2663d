import Synchronization

/// A rebuild that a writable open started in the background (``Store/Configuration/rebuildsInBackground``):
/// whether it has finished, and the tasks waiting for it.
final class BackgroundRebuild: Sendable {
    private struct State {
        var outcome: Result<Void, any Error>?
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    private let state = Mutex(State())

    /// A rebuild that already finished (an open that needed none).
    static func finished() -> BackgroundRebuild {
        let rebuild = BackgroundRebuild()
        rebuild.finish(.success(()))
        return rebuild
    }

    /// Whether the rebuild has not finished.
    var isRunning: Bool { state.withLock { $0.outcome == nil } }

    /// Records the outcome and wakes the waiters.
    func finish(_ outcome: Result<Void, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    /// Returns when the rebuild has finished; throws its error if it failed.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if state.outcome == nil { state.waiters.append(continuation) }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
