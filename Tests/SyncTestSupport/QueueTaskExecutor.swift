import Dispatch

/// A task executor on a serial dispatch queue of its own. A task that prefers it
/// (`withTaskExecutorPreference`) runs there, and resumes there after `Task.sleep`, instead of
/// waiting for a thread of the cooperative pool, which the parallel suite can keep busy for
/// seconds: a test that paces its reads with sleeps reads at the pace it asked for.
public final class QueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// Creates an executor on a new serial queue named `label`.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `job` on the queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
