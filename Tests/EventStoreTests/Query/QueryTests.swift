import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Queries answered from declared indexes: the planner rule, filters, sorts, cursors, counts,
/// and the hostile cases (bad cursors, undeclared indexes, mixed types, huge values).
struct QueryTests {
    static func configuration(_ indexes: [IndexDefinition]) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.indexes = indexes
        return configuration
    }

    static let taskIndexes = [
        IndexDefinition("tasks", fields: ["done", "due"]), IndexDefinition("tasks", fields: ["due"]),
        IndexDefinition("tasks", fields: ["title"]),
    ]

    static func fillTasks(_ store: Store) async throws {
        var changes: [Change] = []
        for number in 0..<60 {
            var fields: [String: Value] = ["title": .string("task \(number)"), "done": .bool(number % 3 == 0)]
            if number % 7 != 0 { fields["due"] = .int(Int64((number * 37) % 50)) }
            changes.append(.put("tasks", id: String(format: "t%02d", number), fields: fields))
        }
        _ = try await store.append(changes)
    }

    /// Runs `body` on a store with ``taskIndexes`` and ``fillTasks(_:)``'s tasks.
    static func withTasks(_ body: (Store) async throws -> Void) async throws {
        try await withTemporaryStore(configuration: configuration(taskIndexes)) { store in
            try await fillTasks(store)
            try await body(store)
        }
    }

    // MARK: Planner

    @Test func openTasksByDueDateUseTheCompoundIndex() async throws {
        try await Self.withTasks { store in
            let query = Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(10)
            let plan = try store.plan(query)
            #expect(plan.index == IndexDefinition("tasks", fields: ["done", "due"]))
            #expect(plan.equalityFields == 1)
            #expect(plan.residual == nil)
            let all = try QueryReference.allItems(store, "tasks")
            let expected = QueryReference.answer(all, filter: query.filter, order: plan.order)
            let page = try store.query(query)
            #expect(page.items.map(\.id) == expected.prefix(10).map(\.id))
            #expect(page.next != nil)
            #expect(try QueryReference.allPages(store, query).map(\.id) == expected.map(\.id))
            #expect(try store.count(query) == expected.count)
        }
    }

    @Test func rangeAndDescendingSort() async throws {
        try await Self.withTasks { store in
            let query = Query("tasks").filter(.and([.greaterOrEqual("due", 10), .less("due", 30.5)]))
                .sorted(by: "due", .descending).limit(7)
            let plan = try store.plan(query)
            #expect(plan.index == IndexDefinition("tasks", fields: ["due"]))
            #expect(plan.rangeField == "due")
            let expected = QueryReference.answer(
                try QueryReference.allItems(store, "tasks"), filter: query.filter, order: plan.order)
            #expect(!expected.isEmpty)
            #expect(try QueryReference.allPages(store, query).map(\.id) == expected.map(\.id))
            #expect(try store.count(query) == expected.count)
        }
    }

    @Test func residualFiltersAreCheckedOnItems() async throws {
        try await Self.withTasks { store in
            let filter: Filter = .and([
                .greater("due", 5), .notEqual("done", true),
                .or([.prefix("title", "task 1"), .oneOf("due", [40, 41, 42])]),
            ])
            let query = Query("tasks", filter: filter, sort: [SortField("due")], limit: 4)
            let plan = try store.plan(query)
            #expect(plan.residual != nil)
            let expected = QueryReference.answer(
                try QueryReference.allItems(store, "tasks"), filter: filter, order: plan.order)
            #expect(try QueryReference.allPages(store, query).map(\.id) == expected.map(\.id))
            #expect(try store.count(query) == expected.count)
        }
    }

    @Test func isMissingAndPrefix() async throws {
        try await Self.withTasks { store in
            _ = try await store.put("tasks", id: "null-due", fields: ["title": "x", "due": .null])
            let missing = try store.query(Query("tasks", filter: .missing("due")))
            #expect(
                Set(missing.items.map(\.id))
                    == Set(["t00", "t07", "t14", "t21", "t28", "t35", "t42", "t49", "t56", "null-due"]))
            let prefixed = try store.query(Query("tasks", filter: .prefix("title", "task 5")))
            #expect(
                prefixed.items.map(\.id) == [
                    "t05", "t50", "t51", "t52", "t53", "t54", "t55", "t56", "t57", "t58", "t59",
                ])
        }
    }

    @Test func undeclaredIndexIsRefusedWithTheIndexToDeclare() async throws {
        try await Self.withTasks { store in
            let query = Query("tasks").filter(.equal("owner", "ana")).sorted(by: "priority", .descending)
            let error = try #require(throws: EventStoreError.self) { try store.query(query) }
            #expect(error.code == .indexRequired)
            #expect(error.message.contains("tasks(owner,priority)"))
            let ranged = try #require(throws: EventStoreError.self) {
                try store.query(Query("tasks", filter: .and([.equal("owner", "ana"), .greater("size", 3)])))
            }
            #expect(ranged.message.contains("tasks(owner,size)"))
            // An index that serves the sort serves the query; other filters are checked on its rows.
            let bySort = Query("tasks").filter(.equal("owner", "ana")).sorted(by: "due", .descending)
            #expect(try store.plan(bySort).index == IndexDefinition("tasks", fields: ["due"]))
            #expect(try store.plan(bySort).residual == .equal("owner", "ana"))
            // Mixed directions cannot be read from one index.
            let mixed = Query("tasks").sorted(by: "done").sorted(by: "due", .descending)
            let mixedError = try #require(throws: EventStoreError.self) { try store.query(mixed) }
            #expect(mixedError.code == .indexRequired)
            #expect(mixedError.message.contains("one direction"))
            // Only an explicit scan answers them.
            let scanned = try store.query(mixed.allowingScan())
            #expect(try store.plan(mixed.allowingScan()).index == nil)
            let expected = QueryReference.answer(
                try QueryReference.allItems(store, "tasks"), filter: nil, order: mixed.sort)
            #expect(scanned.items.map(\.id) == expected.map(\.id))
            let orError = try #require(throws: EventStoreError.self) {
                try store.query(Query("tasks", filter: .or([.equal("a", 1), .equal("b", 2)])))
            }
            #expect(orError.message.contains("allowsScan"))
        }
    }

    // MARK: Cursors

    @Test func badAndForeignCursorsAreRefused() async throws {
        try await Self.withTasks { store in
            let query = Query("tasks").sorted(by: "due").limit(5)
            let next = try #require(try store.query(query).next)
            for bad in ["", "garbage", "q1.", "q1.!!!", String(next.dropLast(3)), next + "AA", "q1.AAAAAAAAAAAA"] {
                let error = try #require(throws: EventStoreError.self) { try store.query(query.after(bad)) }
                #expect(error.code == .invalidQuery, "\(bad)")
            }
            // A flipped character is caught by the checksum.
            var flipped = Array(next)
            let position = flipped.count - 6
            flipped[position] = flipped[position] == "A" ? "B" : "A"
            #expect(throws: EventStoreError.self) { try store.query(query.after(String(flipped))) }
            // A cursor of another query.
            let other = Query("tasks").sorted(by: "title").limit(5)
            let error = try #require(throws: EventStoreError.self) { try store.query(other.after(next)) }
            #expect(error.code == .invalidQuery)
            #expect(error.message.contains("another query"))
            let filtered = try #require(throws: EventStoreError.self) {
                try store.query(query.filter(.greater("due", 3)).after(next))
            }
            #expect(filtered.code == .invalidQuery)
        }
    }

    /// A keyset cursor continues strictly after its row, whatever changed before it.
    @Test func cursorsAreStableUnderConcurrentWrites() async throws {
        try await Self.withTasks { store in
            let query = Query("tasks").sorted(by: "due").limit(10)
            let first = try store.query(query)
            let last = try #require(first.items.last)
            // Writes before, at and after the cursor's row.
            _ = try await store.delete("tasks", id: first.items[0].id)
            _ = try await store.put("tasks", id: "early", fields: ["due": -5])
            _ = try await store.delete("tasks", id: last.id)
            _ = try await store.put("tasks", id: "late", fields: ["due": 999])
            let rest = try QueryReference.allPages(store, query.after(first.next))
            let plan = try store.plan(query)
            let all = QueryReference.answer(try QueryReference.allItems(store, "tasks"), filter: nil, order: plan.order)
            let lastDue = last.fields["due"]
            let expected = all.filter { item in
                let order = QueryReference.compare(item.fields["due"], lastDue)
                return order > 0
                    || (order == 0 && item.id.utf8.lexicographicallyPrecedes(last.id.utf8) == false
                        && item.id != last.id)
            }
            #expect(rest.map(\.id) == expected.map(\.id))
            #expect(rest.contains { $0.id == "late" })
            #expect(!rest.contains { $0.id == "early" })
        }
    }

    // MARK: Hostile values

    @Test func mixedTypesInOneIndexedField() async throws {
        try await withTemporaryStore(configuration: Self.configuration([IndexDefinition("mixed", fields: ["v"])])) {
            store in
            let values: [Value?] = [
                nil, .null, false, true, 3, 2.5, -1, "3", "a", "", .array([1]), .object(["k": "v"]), 3.0,
            ]
            var changes: [Change] = []
            for (number, value) in values.enumerated() {
                changes.append(.put("mixed", id: "m\(number)", fields: value.map { ["v": $0] } ?? ["other": 1]))
            }
            _ = try await store.append(changes)
            let all = try QueryReference.allItems(store, "mixed")
            let sorted = Query("mixed").sorted(by: "v")
            #expect(
                try store.query(sorted).items.map(\.id)
                    == QueryReference.answer(all, filter: nil, order: sorted.sort).map(\.id))
            #expect(try store.query(sorted).items.map(\.id).prefix(4) == ["m0", "m1", "m2", "m3"])
            // Range comparisons stay within the bound's type; numbers compare by value.
            #expect(
                Set(try store.query(Query("mixed", filter: .greater("v", 0))).items.map(\.id)) == ["m4", "m5", "m12"])
            #expect(Set(try store.query(Query("mixed", filter: .equal("v", 3))).items.map(\.id)) == ["m4", "m12"])
            #expect(
                Set(try store.query(Query("mixed", filter: .less("v", "b"))).items.map(\.id)) == ["m7", "m8", "m9"])
            #expect(Set(try store.query(Query("mixed", filter: .equal("v", .array([1])))).items.map(\.id)) == ["m10"])
            #expect(try store.count(Query("mixed", filter: .notEqual("v", 3)).allowingScan()) == values.count - 2)
        }
    }

    /// Values longer than an index key can hold are truncated in the key; answers stay exact.
    @Test func hugeValuesGiveExactAnswers() async throws {
        let indexes = [IndexDefinition("docs", fields: ["body"]), IndexDefinition("docs", fields: ["body", "n"])]
        try await withTemporaryStore(configuration: Self.configuration(indexes)) { store in
            let base = String(repeating: "long shared prefix ", count: 40)
            var random = SeededGenerator(seed: 3)
            var changes: [Change] = []
            for number in 0..<80 {
                let tail = String(
                    (0..<Int.random(in: 0..<6, using: &random)).map { _ in "ab\0c".randomElement(using: &random)! })
                let body = number % 10 == 0 ? "short \(number)" : base + tail
                let id = number % 4 == 0 ? String(repeating: "i", count: 250) + "\(number)" : "d\(number)"
                changes.append(.put("docs", id: id, fields: ["body": .string(body), "n": .int(Int64(number % 5))]))
            }
            _ = try await store.append(changes)
            let all = try QueryReference.allItems(store, "docs")
            let probe = base + "a"
            let queries = [
                Query("docs").sorted(by: "body").limit(7),
                Query("docs").sorted(by: "body", .descending).limit(3),
                Query("docs", filter: .equal("body", .string(probe))).sorted(by: "n"),
                Query("docs", filter: .greater("body", .string(probe))).limit(5),
                Query("docs", filter: .lessOrEqual("body", .string(probe + "b"))).limit(6),
                Query("docs", filter: .prefix("body", base + "ab")).limit(4),
                Query("docs", filter: .equal("body", .string(base))).sorted(by: "n", .descending),
            ]
            for query in queries {
                let plan = try store.plan(query)
                let expected = QueryReference.answer(all, filter: query.filter, order: plan.order)
                #expect(try QueryReference.allPages(store, query).map(\.id) == expected.map(\.id), "\(query)")
                #expect(try store.count(query) == expected.count, "\(query)")
            }
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func invalidQueries() throws {
        try withTemporaryStore(configuration: Self.configuration(Self.taskIndexes)) { store in
            for query in [
                Query("tasks").sorted(by: "due").limit(0), Query("").allowingScan(),
                Query("tasks").sorted(by: "due").sorted(by: "due", .descending),
            ] {
                let error = try #require(throws: EventStoreError.self) { try store.query(query) }
                #expect(error.code == .invalidQuery)
            }
        }
    }

    /// The largest limits are "all", on the index's path and on a scan.
    @Test func theLargestLimitsAnswerEverything() async throws {
        try await Self.withTasks { store in
            for limit in [Int.max, Int.max - 1] {
                for query in [
                    Query("tasks").sorted(by: "due").limit(limit),
                    Query("tasks").filter(.equal("done", true)).allowingScan().limit(limit),
                ] {
                    let expected = QueryReference.answer(
                        try QueryReference.allItems(store, "tasks"), filter: query.filter,
                        order: try store.plan(query).order)
                    let page = try store.query(query)
                    #expect(page.items.map(\.id) == expected.map(\.id))
                    #expect(page.next == nil)
                }
            }
        }
    }

    /// Equality on a string is by its bytes: two canonically equivalent spellings of one text
    /// are two values, whether the index or a scan answers.
    @Test func canonicallyEquivalentStringsAreTwoValues() async throws {
        try await Self.withTasks { store in
            _ = try await store.put("tasks", id: "accented", fields: ["title": "\u{E9}", "done": false])
            let both = Filter.and([.equal("title", "\u{E9}"), .equal("title", "e\u{301}")])
            #expect(try store.query(Query("tasks").filter(both)).items.isEmpty)
            #expect(try store.query(Query("tasks").filter(both).allowingScan()).items.isEmpty)
            #expect(try store.count(Query("tasks").filter(both)) == 0)
            #expect(try store.query(Query("tasks").filter(.equal("title", "\u{E9}"))).items.map(\.id) == ["accented"])
            #expect(try store.query(Query("tasks").filter(.equal("title", "e\u{301}"))).items.isEmpty)
        }
    }

    // MARK: Snapshots

    /// A query reads a snapshot: it neither waits for an open write transaction nor sees it.
    /// A query runs while a write transaction holds an append open: it answers from its snapshot
    /// without the append, and without waiting. The writer waits at a gate that only the test
    /// opens after the query, so a query that waited for the writer would wait for the gate's
    /// timeout and see the append, and both expectations below would fail; no clock is read.
    @Test func queriesNeverWaitForWriters() async throws {
        try await Self.withTasks { store in
            let query = Query("tasks").sorted(by: "due").limit(100)
            let before = try store.query(query)
            let (entered, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let writing = Task {
                try await store.write { writer -> Bool in
                    try writer.append(.put("tasks", id: "zz", fields: ["due": -1]))
                    entered.signal()
                    return gate.wait(timeout: .now() + 30) == .success
                }
            }
            await Task.detached { entered.wait() }.value
            let during = try store.query(query)
            gate.signal()
            #expect(try await writing.value, "the query waited for the open write")
            #expect(during == before, "the open write is not visible")
            #expect(try store.query(query).items.contains { $0.id == "zz" })
        }
    }

    // MARK: Search

    @Test func searchWithinAFilter() async throws {
        try await withTemporaryStore(configuration: Self.configuration([])) { store in
            var changes: [Change] = []
            for number in 0..<200 {
                changes.append(
                    .put(
                        "notes", id: "n\(number)",
                        fields: [
                            "title": "sync notes \(number)", "folder": .string(number % 50 == 0 ? "work" : "home"),
                        ]))
            }
            _ = try await store.append(changes)
            let hits = try store.search("sync", in: "notes", filter: .equal("folder", "work"), limit: 10)
            #expect(Set(hits.map(\.item.id)) == ["n0", "n50", "n100", "n150"])
            #expect(try store.search("sync", in: "notes", filter: nil, limit: 10).count == 10)
        }
    }
}
