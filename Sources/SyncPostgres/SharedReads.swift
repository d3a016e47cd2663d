import Synchronization

/// Reads that callers asking the same thing at the same time share: the first caller's read
/// runs, and those who ask for the same key while it runs wait for its answer instead of
/// reading again.
///
/// Live pulls use it: when a commit wakes every pull waiting on a store, they would each read
/// the store's head and then the same page, two queries per waiting client per commit. Their
/// keys carry the commit signal's generation they woke at, so a read is shared only by callers
/// for whom it is fresh enough.
final class SharedReads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let running = Mutex<[Key: Task<Value, any Error>]>([:])
    private let reads = Atomic(0)

    /// How many reads ran (for tests).
    var count: Int { reads.load(ordering: .relaxed) }

    /// `read`'s answer for `key`: the running read's when there is one, otherwise a new one's.
    func value(for key: Key, _ read: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = running.withLock { tasks in
            if let task = tasks[key] { return task }
            reads.add(1, ordering: .relaxed)
            let task = Task {
                // Ends the sharing; waits for the insertion below, which holds the lock.
                defer { _ = self.running.withLock { $0.removeValue(forKey: key) } }
                return try await read()
            }
            tasks[key] = task
            return task
        }
        return try await task.value
    }
}
