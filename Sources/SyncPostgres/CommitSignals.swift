import Synchronization

/// Wakes live pulls when a store's log grows: a push on this process signals its store at once,
/// and the `LISTEN` connection signals stores that other processes pushed to.
///
/// A pull reads the store's ``generation(of:)`` before it reads the log, and waits only for a
/// later generation, so that a push committed between the two is never missed.
final class CommitSignals: Sendable {
    private struct State {
        var generations: [String: UInt64] = [:]
        var waiters: [String: [Int: CheckedContinuation<Void, Never>]] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())
    private let listening = Atomic(false)

    /// Whether the `LISTEN` connection is up, so that other processes' pushes signal here
    /// (otherwise waiting pulls poll).
    var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Records whether the `LISTEN` connection is up.
    func setListening(_ up: Bool) { listening.store(up, ordering: .releasing) }

    /// How many times `name` was signalled.
    func generation(of name: String) -> UInt64 {
        state.withLock { $0.generations[name] ?? 0 }
    }

    /// Wakes the pulls waiting on `name`.
    func signal(_ name: String) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generations[name, default: 0] += 1
            return (state.waiters.removeValue(forKey: name) ?? [:]).map(\.value)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Wakes every waiting pull (to read again after notifications may have been missed).
    func signalAll() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            for name in state.waiters.keys { state.generations[name, default: 0] += 1 }
            defer { state.waiters.removeAll() }
            return state.waiters.values.flatMap(\.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Waits until `name` is signalled past generation `seen`, at most `timeout`; returns early
    /// when the task is cancelled.
    func wait(for name: String, after seen: UInt64, upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal(name, after: seen) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal(_ name: String, after seen: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if (state.generations[name] ?? 0) > seen || Task.isCancelled { return true }
                    state.waiters[name, default: [:]][id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters[name]?.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
