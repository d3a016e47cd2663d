import Synchronization
import Testing

@testable import EventSyncService

/// Tasks of one key take turns in arrival order while a task of another key goes on; the tasks
/// that wait hold no thread (a hundred of them wait on a pool of two).
struct AsyncTurnsTests {
    @Test func tasksOfOneKeyTakeTurnsInOrderAndOtherKeysGoOn() async throws {
        let turns = AsyncTurns()
        let gate = AsyncStream<Void>.makeStream()
        let holding = Mutex(false)
        let holder = Task {
            await turns.withTurn("a") {
                holding.withLock { $0 = true }
                for await _ in gate.stream { break }
            }
        }
        while !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        let seen = Seen()
        var waiting: [Task<Void, Never>] = []
        for index in 0..<100 {
            waiting.append(
                Task {
                    await turns.withTurn("a") {
                        seen.enter(index)
                        await Task.yield()
                        seen.leave()
                    }
                })
            // Each one waits before the next arrives, so that arrival order is known.
            while turns.waiting(for: "a") < index + 1 { await Task.yield() }
        }
        // Another key's turn is free while a hundred tasks wait for "a".
        #expect(await turns.withTurn("b") { 42 } == 42)
        gate.continuation.yield()
        gate.continuation.finish()
        await holder.value
        for task in waiting { await task.value }
        #expect(seen.state.withLock { $0.order } == Array(0..<100))
        #expect(seen.state.withLock { $0.most } == 1, "two tasks of one key ran at once")
        #expect(turns.keysInUse == 0)
    }

    /// What the tasks holding the turn saw: their order, and the most inside at once.
    final class Seen: Sendable {
        let state = Mutex((order: [Int](), inside: 0, most: 0))

        func enter(_ index: Int) {
            state.withLock { state in
                state.order.append(index)
                state.inside += 1
                state.most = max(state.most, state.inside)
            }
        }

        func leave() { state.withLock { $0.inside -= 1 } }
    }
}
