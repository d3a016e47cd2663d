import EventSync
import Testing

/// The waiting primitive under the sync client's wake-ups and the live pulls' waits: no wake-up
/// is lost between a waiter's check and its park, wake-ups reach only their keys, and a
/// cancelled waiter returns.
struct ParkingLotTests {
    @Test func aReadyConditionReturnsAtOnceAndMayChangeTheState() async {
        let lot = ParkingLot<Int, String>(1)
        await lot.park(under: "a") { count in
            defer { count -= 1 }
            return count > 0
        }
        #expect(lot.read { $0 } == 0)
    }

    @Test func aWakeUpReachesOnlyTheTasksParkedUnderItsKeys() async {
        let lot = ParkingLot<[String: Int], String>([:])
        let woken = ParkingLot<[String], Int>([])
        let parked = ["a", "b"].map { key in
            Task {
                await lot.park(under: key) { ($0[key] ?? 0) > 0 }
                woken.wake { names, _ in
                    names.append(key)
                    return []
                }
            }
        }
        while parkedKeys(lot) != ["a", "b"] { await Task.yield() }
        lot.wake { state, _ in
            state["b"] = 1
            return ["b"]
        }
        await parked[1].value
        #expect(woken.read { $0 } == ["b"])
        lot.wake { state, _ in
            state["a"] = 1
            return nil
        }
        await parked[0].value
        #expect(woken.read { $0 }.sorted() == ["a", "b"])
    }

    @Test func aCancelledWaiterReturns() async {
        let lot = ParkingLot<Bool, Int>(false)
        let waiter = Task { await lot.park(under: 0) { $0 } }
        while parkedKeys(lot).isEmpty { await Task.yield() }
        waiter.cancel()
        await waiter.value
        #expect(parkedKeys(lot).isEmpty)
        // A task cancelled before it parks returns too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await lot.park(under: 0) { $0 }
        }
        await early.value
    }

    @Test func noWakeUpIsLostBetweenTheCheckAndThePark() async {
        for _ in 0..<50 {
            let lot = ParkingLot<Bool, Int>(false)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { await lot.park(under: 0) { $0 } } }
                group.addTask {
                    lot.wake { ended, _ in
                        ended = true
                        return nil
                    }
                }
            }
        }
    }

    /// The keys tasks are parked under, read through a wake-up that wakes none.
    private func parkedKeys<State: Sendable>(_ lot: ParkingLot<State, some Hashable & Sendable & Comparable>)
        -> [String]
    {
        var keys: [String] = []
        lot.wake { _, parked in
            keys = parked.sorted().map { "\($0)" }
            return []
        }
        return keys
    }
}
