import Foundation

/// Work that blocks its thread (an open of a store, which may rebuild its projections first),
/// run on a thread of its own rather than on the cooperative pool that every request's task
/// shares (two such opens would otherwise stop every request of the process on two cores), nor
/// on a dispatch queue, whose few threads other work of the process may hold.
enum BlockingWork {
    /// `body`'s result, computed on a new thread.
    static func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
        }
    }
}
