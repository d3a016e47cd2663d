import Foundation
import Synchronization

/// Runs `body` in a detached task and blocks the calling thread until it finishes: how the
/// synchronous harness drives async APIs (sync, the sync server).
///
/// Call it from a plain thread (the main thread of a child process), never from a task: it
/// blocks its thread while `body` runs on the global executor.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}
