import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// The defining property of queries: across random writes, patches, deletes, rebuilds (in passes
/// over the log for even seeds) and a sync to a second store, every query's answer (followed
/// through all its pages) equals a filter and sort of all items, and every count equals the
/// number of matching items.
struct QueryPropertyTests {
    static let indexes = [
        IndexDefinition("tasks", fields: ["status", "due"]), IndexDefinition("tasks", fields: ["due"]),
        IndexDefinition("tasks", fields: ["title"]), IndexDefinition("tasks", fields: ["status", "title", "due"]),
    ]

    /// The declared indexes; with `heldRecords`, rebuilds and verifies that hold no more item
    /// records than that, so that they replay the log in passes.
    static func configuration(heldRecords: Int? = nil) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.indexes = indexes
        if let heldRecords { configuration.replayRecordLimit = heldRecords }
        return configuration
    }

    struct Generator {
        var random: SeededGenerator
        let longPrefix = String(repeating: "shared ", count: 60)

        mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

        mutating func status() -> Value? { pick([nil, .null, "open", "done", "waiting", 3, true]) }
        mutating func due() -> Value? {
            chance(15)
                ? pick([nil, .null, "soon"])
                : (chance(50)
                    ? .int(Int64.random(in: -5...20, using: &random))
                    : .double(Double(Int.random(in: -10...40, using: &random)) / 2))
        }
        mutating func title() -> Value? {
            if chance(10) { return nil }
            let word = pick(["alpha", "beta", "beta", "gamma", "", "é", "e\u{301}", "zeta\0x"])
            return .string(chance(25) ? longPrefix + word + String(Int.random(in: 0..<3, using: &random)) : word)
        }
        mutating func id() -> String {
            let number = Int.random(in: 0..<40, using: &random)
            return number % 9 == 0 ? String(repeating: "k", count: 240) + "\(number)" : "t\(number)"
        }

        mutating func fields() -> [String: Value] {
            var fields: [String: Value] = [:]
            if let value = status() { fields["status"] = value }
            if let value = due() { fields["due"] = value }
            if let value = title() { fields["title"] = value }
            if fields.isEmpty { fields["other"] = 1 }
            return fields
        }

        mutating func change() -> Change {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: return .put("tasks", id: id(), fields: fields())
            case 5..<8: return .patch("tasks", id: id(), fields: fields())
            default: return .delete("tasks", id: id())
            }
        }

        mutating func leaf() -> Filter {
            switch Int.random(in: 0..<11, using: &random) {
            case 0: return .equal("status", status() ?? .null)
            case 1: return .notEqual("status", status() ?? "open")
            case 2: return .less("due", due() ?? 3)
            case 3: return .lessOrEqual("due", due() ?? 3)
            case 4: return .greater("due", due() ?? 3)
            case 5: return .greaterOrEqual("title", title() ?? "beta")
            case 6: return .between("due", due() ?? 0, due() ?? 10)
            case 7: return .oneOf("status", [status() ?? "open", status() ?? "done"])
            case 8: return .prefix("title", pick(["b", "", longPrefix + "b", "shared", "e"]))
            case 9: return .missing(pick(["due", "status", "title"]))
            default: return .equal("title", title() ?? "alpha")
            }
        }

        mutating func query() -> Query {
            var conjuncts: [Filter] = []
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                conjuncts.append(chance(15) ? .or([leaf(), leaf()]) : leaf())
            }
            let sorts: [[SortField]] = [
                [], [SortField("due")], [SortField("due", .descending)], [SortField("title")],
                [SortField("status"), SortField("due")],
                [SortField("status", .descending), SortField("due", .descending)],
                [SortField("title", .descending)], [SortField("due"), SortField("title", .descending)],
            ]
            return Query(
                "tasks", filter: conjuncts.isEmpty ? nil : conjuncts.count == 1 ? conjuncts[0] : .and(conjuncts),
                sort: pick(sorts), limit: pick([nil, 1, 3, 7, 50]))
        }
    }

    /// Runs a query (or its scan when no index serves it) and compares it with the reference.
    static func check(_ query: Query, on store: Store, items: [Item]) throws -> Bool {
        var query = query
        let plan: QueryPlan
        do {
            plan = try store.plan(query)
        } catch let error as EventStoreError where error.code == .indexRequired {
            query = query.allowingScan()
            plan = try store.plan(query)
        }
        // The plan orders by the query's sort fields that no equality fixes, first.
        let fixed = Set(
            (query.filter?.conjuncts ?? []).compactMap { filter -> String? in
                if case .equal(let field, _) = filter { return field }
                return nil
            })
        let unfixed = query.sort.filter { !fixed.contains($0.field) }
        #expect(Array(plan.order.prefix(unfixed.count)) == unfixed || plan.index == nil, "\(query) \(plan)")
        let expected = QueryReference.answer(items, filter: query.filter, order: plan.order)
        let actual = try QueryReference.allPages(store, query, maxPages: items.count + 2)
        let same = actual.map(\.id) == expected.map(\.id) && actual == expected
        if !same {
            func short(_ items: [Item]) -> String {
                items.prefix(30).map { $0.id.count > 12 ? "k…" + $0.id.suffix(2) : $0.id }.joined(separator: " ")
            }
            Issue.record(
                "\(query)\n\(plan)\nactual   (\(actual.count)): \(short(actual))\nexpected (\(expected.count)): \(short(expected))"
            )
        }
        #expect(try store.count(query) == expected.count, "\(query)")
        // Typed queries read the same rows, each model decoded from its record in place.
        let typed = try QueryReference.allTypedPages(store, query, maxPages: items.count + 2)
        #expect(typed == expected.map(QueryReference.Row.init), "\(query)")
        return same
    }

    @Test(arguments: Array(1...8) as [UInt64])
    func answersEqualFilterAndSortOfAllItems(seed: UInt64) async throws {
        let second = TemporaryDirectory()
        defer { second.remove() }
        // Even seeds rebuild and verify in passes over the log, a few items each.
        try await withTemporaryStore(configuration: Self.configuration(heldRecords: seed % 2 == 0 ? 8 : nil)) { store in
            var generator = Generator(random: SeededGenerator(seed: seed))
            var failures = 0
            for round in 0..<12 {
                let changes = (0..<Int.random(in: 1...25, using: &generator.random)).map { _ in generator.change() }
                _ = try await store.append(changes)
                if round == 6 { try await store.rebuildProjections() }
                let items = try QueryReference.allItems(store, "tasks")
                for _ in 0..<25 where failures == 0 {
                    if try !Self.check(generator.query(), on: store, items: items) { failures += 1 }
                }
            }
            #expect(try store.verify().isConsistent)

            // A second store that receives every event (a sync) answers alike.
            let replica = try Store.open(at: second.path, configuration: Self.configuration())
            defer { replica.close() }
            let events = try store.read { reader in
                var events: [Event] = []
                try reader.forEachEvent {
                    events.append($0); return true
                }
                return events
            }
            _ = try await replica.ingest(events)
            let items = try QueryReference.allItems(replica, "tasks")
            #expect(items == (try QueryReference.allItems(store, "tasks")))
            for _ in 0..<40 where failures == 0 {
                if try !Self.check(generator.query(), on: replica, items: items) { failures += 1 }
            }
            #expect(try replica.verify().isConsistent)
        }
    }
}
