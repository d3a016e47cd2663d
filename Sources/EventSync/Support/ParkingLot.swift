import Synchronization

/// Tasks that wait until a condition on a shared state holds: a waiter checks its condition and
/// parks under one lock, so a wake-up between the check and the park is never lost, and it
/// returns when woken or at once when its task is cancelled. The wake-ups of the sync client
/// and the live pulls' waits are built on it.
package final class ParkingLot<State: Sendable, Key: Hashable & Sendable>: Sendable {
    private struct Lot {
        var state: State
        var parked: [Key: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        var nextID: UInt64 = 0
    }

    private let lot: Mutex<Lot>

    /// Creates a lot with no task parked.
    package init(_ state: State) {
        lot = Mutex(Lot(state: state))
    }

    /// Reads the state.
    package func read<Result: Sendable>(_ body: (State) -> Result) -> Result {
        lot.withLock { body($0.state) }
    }

    /// Changes the state, then resumes the tasks parked under the keys `body` returns (`nil`:
    /// every parked task). `body` also gets the keys tasks are parked under.
    package func wake(_ body: (inout State, _ parkedKeys: [Key]) -> [Key]?) {
        let woken = lot.withLock { lot -> [CheckedContinuation<Void, Never>] in
            guard let keys = body(&lot.state, Array(lot.parked.keys)) else {
                defer { lot.parked.removeAll() }
                return lot.parked.values.flatMap(\.values)
            }
            return keys.flatMap { (lot.parked.removeValue(forKey: $0) ?? [:]).values }
        }
        for task in woken { task.resume() }
    }

    /// Returns at once when `ready` holds (it may change the state, under the lock), and
    /// otherwise when the tasks parked under `key` are woken or this task is cancelled.
    package func park(under key: Key, unless ready: (inout State) -> Bool) async {
        let id = lot.withLock { lot in
            defer { lot.nextID += 1 }
            return lot.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lot.withLock { lot -> Bool in
                    if ready(&lot.state) || Task.isCancelled { return true }
                    lot.parked[key, default: [:]][id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let task = lot.withLock { lot -> CheckedContinuation<Void, Never>? in
                let task = lot.parked[key]?.removeValue(forKey: id)
                if lot.parked[key]?.isEmpty == true { lot.parked[key] = nil }
                return task
            }
            task?.resume()
        }
    }
}
