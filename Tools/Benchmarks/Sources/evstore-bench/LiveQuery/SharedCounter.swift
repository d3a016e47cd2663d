import Synchronization

/// A count shared by concurrent writers.
final class SharedCounter: Sendable {
    private let count = Mutex(0)

    func add(_ value: Int) { count.withLock { $0 += value } }
    var value: Int { count.withLock { $0 } }
}
