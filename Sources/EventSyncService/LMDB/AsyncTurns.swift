import Synchronization

/// Turns by key for tasks: a task waits for its key's turn suspended, holding no thread, while
/// tasks with other keys go on. The sync storage opens a store in its name's turn: the requests
/// that wait while a store is opened (and perhaps rebuilt) hold no thread meanwhile.
final class AsyncTurns: Sendable {
    /// The keys whose turn is taken, with the tasks waiting for each, in arrival order.
    private let held = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    /// Runs `body` when no other task runs with `key`.
    func withTurn<Result: Sendable, Failure: Error>(
        _ key: String, _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        await take(key)
        defer { pass(key) }
        return try await body()
    }

    /// The keys whose turn is taken (for tests).
    var keysInUse: Int { held.withLock { $0.count } }

    /// The tasks waiting for `key`'s turn (for tests).
    func waiting(for key: String) -> Int { held.withLock { $0[key]?.count ?? 0 } }

    private func take(_ key: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let taken = held.withLock { held in
                guard held[key] != nil else {
                    held[key] = []
                    return true
                }
                held[key]!.append(continuation)
                return false
            }
            if taken { continuation.resume() }
        }
    }

    /// Hands the turn to the next waiting task, or frees the key.
    private func pass(_ key: String) {
        let next = held.withLock { held -> CheckedContinuation<Void, Never>? in
            guard var waiting = held[key], !waiting.isEmpty else {
                held[key] = nil
                return nil
            }
            let next = waiting.removeFirst()
            held[key] = waiting
            return next
        }
        next?.resume()
    }
}
