import Synchronization

/// Owns the task that feeds an observable model, and cancels it when replaced or released (the
/// model's `deinit` need not touch its isolated state).
package final class ObservationTask: Sendable {
    private let current = Mutex<Task<Void, Never>?>(nil)

    /// An owner of no task yet.
    package init() {}

    /// Cancels the running task, if any, and keeps `task` instead.
    package func replace(with task: Task<Void, Never>?) {
        current.withLock { current in
            current?.cancel()
            current = task
        }
    }

    deinit {
        current.withLock { $0?.cancel() }
    }
}
