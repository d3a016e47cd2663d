/// A level-triggered wake-up signal: `signal()` wakes the waiters, or the next `wait` when no
/// one waits.
final class Wakeup: Sendable {
    /// Whether a signal came while no one waited.
    private let lot = ParkingLot<Bool, Int>(false)

    func signal() {
        lot.wake { pending, parked in
            guard !parked.isEmpty else {
                pending = true
                return []
            }
            return nil
        }
    }

    /// Waits for a signal, at most `timeout` (`nil`: no limit), or until the task is cancelled.
    func wait(timeout: Duration?) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await self.lot.park(under: 0) { pending in
                    defer { pending = false }
                    return pending
                }
            }
            if let timeout { group.addTask { try? await Task.sleep(for: timeout) } }
            await group.next()
            group.cancelAll()
        }
    }
}
