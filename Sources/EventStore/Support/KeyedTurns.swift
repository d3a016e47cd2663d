import Synchronization

/// Turns by key: callers with the same key take turns, while callers with other keys go on
/// meanwhile. Opens of a store path take turns so that one instance serves the path, without
/// holding up the opens of other paths (an open can take long: it may rebuild the projections).
package final class KeyedTurns: Sendable {
    /// The turn of one key.
    private final class Gate: Sendable {
        let turn = Mutex(())
    }

    /// The gates of the keys in use, with how many callers use each.
    private let gates = Mutex<[String: (gate: Gate, users: Int)]>([:])

    /// Creates turns with no key in use.
    package init() {}

    /// The keys some caller holds or waits for (for tests).
    package var keysInUse: Int { gates.withLock { $0.count } }

    /// Runs `body` when no other caller with `key` runs.
    package func withTurn<Result: Sendable, Failure: Error>(
        _ key: String, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let gate = gates.withLock { gates in
            let gate = gates[key]?.gate ?? Gate()
            gates[key] = (gate, (gates[key]?.users ?? 0) + 1)
            return gate
        }
        defer {
            gates.withLock { gates in
                guard let entry = gates[key] else { return }
                gates[key] = entry.users > 1 ? (entry.gate, entry.users - 1) : nil
            }
        }
        return try gate.turn.withLock { _ throws(Failure) in try body() }
    }
}
