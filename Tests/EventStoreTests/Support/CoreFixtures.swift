import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// Shared data and helpers of the core suites: value samples, random item histories, an
/// independent model of the merge rule, and snapshots of a store's state.
enum CoreFixtures {
    /// A moment far from the test machine's clock, so stamps never depend on it.
    static let epoch: UInt64 = 1_800_000_000_000

    /// One sample of every ``Value`` kind, with edge cases.
    static let allValues: [String: Value] = [
        "null": .null, "false": false, "true": true,
        "zero": 0, "negative": -42, "int.max": .int(.max), "int.min": .int(.min),
        "double": 3.25, "negative zero": .double(-0.0), "tiny": .double(.leastNonzeroMagnitude),
        "huge": .double(.greatestFiniteMagnitude), "pi": .double(.pi),
        "string": "héllo 동기화 🙂", "empty": "", "decomposed": "e\u{301}", "nul inside": "a\u{0}b",
        "array": [1, "two", [3.5, nil], ["k": true]], "empty array": [], "empty object": [:],
        "object": ["a": 1, "b": ["c": "d"], "한글 키": [1, 2, 3]],
    ]

    // MARK: Events

    /// An event as another replica would send it.
    static func remote(
        _ origin: ReplicaID, _ sequence: UInt64, at hlc: HLCTimestamp, base: HLCTimestamp = .zero,
        item: String, in collection: String = "notes", _ operation: EventOperation = .put,
        fields: [String: Value] = [:]
    ) -> Event {
        Event(
            id: EventID(origin: origin, sequence: sequence), hlc: hlc, base: base, collection: collection, item: item,
            operation: operation, fields: fields)
    }

    static let words = [
        "offline", "sync", "merge", "clock", "replica", "search", "garden", "recipe", "travel", "budget",
        "동기화를", "오프라인에서", "메모", "회의", "여행", "일정", "검색", "정리",
    ]

    /// A random value of a random kind.
    static func randomValue(_ random: inout SeededGenerator) -> Value {
        switch random.next() % 8 {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: random.next()) >> Int64(random.next() % 60))
        case 3: return .double(Double(random.next() % 10_000) / 8)
        case 4, 5: return .string(words[Int(random.next() % UInt64(words.count))])
        case 6: return .array([.int(Int64(random.next() % 5)), .string(words[Int(random.next() % 4)])])
        default: return .object(["n": .int(Int64(random.next() % 3))])
        }
    }

    /// What the fields of a ``randomHistory(seed:origins:events:values:collections:items:fieldNames:)``
    /// hold. Each kind keeps its own odds and origin ids too, so that a seed gives the events it
    /// gave when the suites using it were written.
    enum HistoryValues {
        /// Values of every kind (``randomValue(_:)``), each field written with odds 1/3; origins
        /// differ in the low half of their id.
        case anyKind
        /// Values that suit each field (``ProjectionFixtures/value(for:_:)``: English and Korean
        /// text, tags, flags, numbers), each field written with odds 2/5; origins differ in the
        /// high half of their id.
        case byField
    }

    /// A random history of the items `items` of `collections`, written by `origins` replicas with
    /// few distinct physical times (so equal clock stamps from different origins are common).
    ///
    /// Each origin's stamps strictly increase (logical counter), as a real clock's do. Event bases
    /// are either zero (nothing seen) or an earlier stamp, never after the event.
    static func randomHistory(
        seed: UInt64, origins originCount: Int = 3, events count: Int = 12, values: HistoryValues = .anyKind,
        collections: [String] = ["notes"], items: [String] = ["x"], fieldNames: [String] = ProjectionFixtures.fieldNames
    ) -> [Event] {
        var random = SeededGenerator(seed: seed)
        let origins = (0..<originCount).map { index in
            values == .anyKind
                ? ReplicaID(high: seed, low: UInt64(index + 1)) : ReplicaID(high: UInt64(index + 1), low: seed)
        }
        func writesField(_ random: inout SeededGenerator) -> Bool {
            values == .anyKind ? (random.next() % 3 == 0) : (random.next() % 5 < 2)
        }
        func fieldValue(_ field: String, _ random: inout SeededGenerator) -> Value {
            values == .anyKind ? randomValue(&random) : ProjectionFixtures.value(for: field, &random)
        }
        var sequences = [UInt64](repeating: 0, count: originCount)
        var events: [Event] = []
        for _ in 0..<count {
            let origin = Int(random.next() % UInt64(originCount))
            sequences[origin] += 1
            let roll = random.next() % 10
            let operation: EventOperation = roll < 3 ? .put : (roll < 8 ? .patch : .delete)
            var fields: [String: Value] = [:]
            if operation != .delete {
                for name in fieldNames where writesField(&random) { fields[name] = fieldValue(name, &random) }
                if operation == .patch && fields.isEmpty { fields[fieldNames[0]] = fieldValue(fieldNames[0], &random) }
            }
            let hlc = HLCTimestamp(physical: epoch + random.next() % 3, logical: UInt16(sequences[origin]))
            let base = random.next() % 2 == 0 ? HLCTimestamp.zero : HLCTimestamp(physical: epoch, logical: 0)
            // The projection suites' histories draw a collection (the others write the first).
            let collection =
                values == .byField ? collections[Int(random.next() % UInt64(collections.count))] : collections[0]
            events.append(
                Event(
                    id: EventID(origin: origins[origin], sequence: sequences[origin]), hlc: hlc,
                    base: min(base, hlc), collection: collection, item: items[Int(random.next() % UInt64(items.count))],
                    operation: operation, fields: fields))
        }
        return events
    }

    // MARK: Reading a store

    /// The fields of every item of a collection, by id.
    static func fieldsByID(_ store: Store, in collection: String) throws -> [String: [String: Value]] {
        Dictionary(uniqueKeysWithValues: try ProjectionFixtures.items(store, in: collection).map { ($0.id, $0.fields) })
    }

    /// Search results as comparable values: ids and scores, best first.
    static func results(_ store: Store, _ query: SearchQuery) throws -> [String] {
        try store.search(query).map { "\($0.item.id) \($0.score)" }
    }

    // MARK: Async helpers

    /// Runs `body`, failing the test and cancelling it when it takes longer than `seconds`.
    static func withTimeout<T: Sendable>(
        seconds: Double, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            if first == nil { Issue.record("timed out after \(seconds) s", sourceLocation: sourceLocation) }
            return first
        }
    }

    /// The value of `task`, cancelling it and failing the test when it takes longer than `seconds`.
    static func value<T: Sendable>(
        of task: Task<T, any Error>, timeout seconds: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> T? {
        try await withTimeout(seconds: seconds, sourceLocation: sourceLocation) {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }
}
