import Foundation

/// `body`'s result, computed on a thread of its own: for work that holds its thread for long (a
/// verify of a large store, a flush of hundreds of MiB, an open that waits for another
/// process's write lock). On the cooperative pool, whose two threads the whole parallel suite
/// shares, such work stops every other test's tasks until it ends, the request handlers of
/// in-process servers among them.
public func offPool<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
    }
}
