import EventSync

/// The waits of a service's live pulls, which a graceful shutdown ends all at once: every pull
/// waiting then, and every later one, answers at once with what its store holds.
///
/// Ending the waits this way, rather than by cancelling the requests' tasks, leaves each pull to
/// read its page as usual: a cancelled task could not query PostgreSQL for it.
package final class LiveWaits: Sendable {
    /// Whether the waits were ended.
    private let lot = ParkingLot<Bool, Int>(false)

    package init() {}

    /// Whether the waits were ended.
    package var areEnded: Bool { lot.read { $0 } }

    /// Ends every wait, now and from now on.
    package func end() {
        lot.wake { ended, _ in
            ended = true
            return nil
        }
    }

    /// Waits for `wait` to return, at most `timeout`, and no longer than until the waits end or
    /// the task is cancelled.
    package func wait(upTo timeout: Duration, for wait: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await wait() }
            group.addTask { try? await Task.sleep(for: timeout) }
            // Returns once the waits are ended (at once when they already are).
            group.addTask { await self.lot.park(under: 0) { $0 } }
            await group.next()
            group.cancelAll()
        }
    }
}
