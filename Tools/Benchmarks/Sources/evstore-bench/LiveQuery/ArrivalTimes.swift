import Synchronization

/// When the answer showing each commit reached a live query's consumer, by commit number
/// (monotonic nanoseconds).
final class ArrivalTimes: Sendable {
    private let times = Mutex<[Int: UInt64]>([:])

    func record(_ commit: Int, at nanoseconds: UInt64) { times.withLock { $0[commit] = nanoseconds } }

    subscript(commit: Int) -> UInt64? { times.withLock { $0[commit] } }
}
