import EventSync
import EventSyncService
import Synchronization

/// Wakes live pulls when a store's log grows: a push on this process signals its store at once,
/// and the `LISTEN` connection signals stores that other processes pushed to.
///
/// A pull reads the store's ``generation(of:)`` before it reads the log, and waits only for a
/// later generation, so that a push committed between the two is never missed.
final class CommitSignals: Sendable {
    /// How many times each store was signalled; tasks wait under the store's name.
    private let lot = ParkingLot<[String: UInt64], String>([:])
    private let listening = Atomic(false)

    /// Whether the `LISTEN` connection is up, so that other processes' pushes signal here
    /// (otherwise waiting pulls poll).
    var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Records whether the `LISTEN` connection is up.
    func setListening(_ up: Bool) { listening.store(up, ordering: .releasing) }

    /// How many times `name` was signalled.
    func generation(of name: String) -> UInt64 {
        lot.read { $0[name] ?? 0 }
    }

    /// Wakes the pulls waiting on `name`.
    func signal(_ name: String) {
        lot.wake { generations, _ in
            generations[name, default: 0] += 1
            return [name]
        }
    }

    /// Wakes every waiting pull (to read again after notifications may have been missed).
    func signalAll() {
        lot.wake { generations, waited in
            for name in waited { generations[name, default: 0] += 1 }
            return nil
        }
    }

    /// Waits until `name` is signalled past generation `seen`, at most `timeout`; returns early
    /// when `liveWaits` end or the task is cancelled.
    func wait(for name: String, after seen: UInt64, upTo timeout: Duration, liveWaits: LiveWaits) async {
        await liveWaits.wait(upTo: timeout) {
            await self.lot.park(under: name) { ($0[name] ?? 0) > seen }
        }
    }
}
