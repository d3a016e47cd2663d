import EventStore
import Synchronization

/// What one live query yielded: its last answer, how many answers, and how many of them equal
/// the answer before (same items, fields and next cursor), which a live query must never yield.
final class ObserverLog: Sendable {
    private struct State {
        var last: QueryPage?
        var yields = 0
        var redundant = 0
    }

    private let state = Mutex(State())

    /// Records one yielded answer.
    func record(_ page: QueryPage) {
        state.withLock { state in
            if let last = state.last, ObserverLog.sameAnswer(last, page) { state.redundant += 1 }
            state.last = page
            state.yields += 1
        }
    }

    var last: QueryPage? { state.withLock { $0.last } }
    var yields: Int { state.withLock { $0.yields } }
    var redundant: Int { state.withLock { $0.redundant } }

    /// Whether two answers hold the same items, in order, with the same fields, and the same
    /// next cursor (what a live query compares before it yields).
    static func sameAnswer(_ lhs: QueryPage, _ rhs: QueryPage) -> Bool {
        lhs.next == rhs.next && lhs.items.count == rhs.items.count
            && zip(lhs.items, rhs.items).allSatisfy { $0.id == $1.id && $0.fields == $1.fields }
    }
}
