import EventStore
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Callers of one key take turns; callers of other keys run meanwhile; a key leaves the table
/// when its last caller does.
struct KeyedTurnsTests {
    @Test func callersOfOneKeyTakeTurnsAndOtherKeysRunMeanwhile() throws {
        let turns = KeyedTurns()
        let inside = Mutex([String: Int]())
        let most = Mutex([String: Int]())
        let otherRan = DispatchSemaphore(value: 0)
        // Threads of their own: callers that wait for a turn would starve a queue's few threads.
        let finished = DispatchSemaphore(value: 0)
        for index in 0..<8 {
            Thread.detachNewThread {
                defer { finished.signal() }
                turns.withTurn("a") { () -> Void in
                    let count = inside.withLock { inside in
                        inside["a", default: 0] += 1
                        return inside["a"]!
                    }
                    most.withLock { $0["a"] = max($0["a"] ?? 0, count) }
                    // The first holder of "a" waits until a caller of "b" ran: "b" is not held up.
                    if index == 0 { _ = otherRan.wait(timeout: .now() + 10) }
                    Thread.sleep(forTimeInterval: 0.002)
                    inside.withLock { $0["a", default: 0] -= 1 }
                }
            }
        }
        Thread.detachNewThread {
            defer { finished.signal() }
            turns.withTurn("b") { () -> Void in _ = otherRan.signal() }
        }
        for _ in 0..<9 { #expect(finished.wait(timeout: .now() + 30) == .success) }
        #expect(most.withLock { $0["a"] } == 1, "two callers of one key ran at once")
        #expect(turns.keysInUse == 0)
        // A failure leaves the turn too.
        #expect(throws: CocoaError.self) { try turns.withTurn("a") { throw CocoaError(.fileNoSuchFile) } }
        #expect(turns.keysInUse == 0)
    }
}
