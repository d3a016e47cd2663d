import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// The observable live query a view binds to: its states, its re-queries, its failures and
/// retries, untyped and typed.
@MainActor
struct LiveQueryTests {
    struct Task: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var title: String
        var done: Bool
        var due: Int
    }

    static func configuration() -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        configuration.indexes = [IndexDefinition("tasks", fields: ["done", "due"])]
        return configuration
    }

    static func fill(_ store: Store) async throws {
        _ = try await store.append(
            (0..<6).map {
                .put(
                    "tasks", id: "t\($0)",
                    fields: ["title": .string("task \($0)"), "done": .bool($0 % 2 == 0), "due": .int(Int64($0))])
            })
    }

    func ids(_ model: LiveQuery<Query>) -> [String]? {
        if case .loaded(let items, _) = model.state { return items.map(\.id) }
        return nil
    }

    @Test func loadsThenFollowsCommitsThatChangeTheAnswer() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            try await Self.fill(store)
            let model = LiveQuery(Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(2), in: store)
            #expect(model.isLoading)
            #expect(try await eventually { ids(model) == ["t1", "t3"] })
            if case .loaded(_, let next) = model.state { #expect(next != nil, "two of three rows: a next page") }
            _ = try await store.put("tasks", id: "t9", fields: ["title": "urgent", "done": false, "due": -1])
            #expect(try await eventually { ids(model) == ["t9", "t1"] })
            #expect(model.elements.first?["title"] == "urgent")
            #expect(model.error == nil)
        }
    }

    @Test func anAnswerWithoutRowsIsEmptyAndFillsWhenARowArrives() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            let model = LiveQuery(Query("tasks").filter(.equal("done", true)).sorted(by: "due"), in: store)
            #expect(try await eventually { if case .empty = model.state { true } else { false } })
            _ = try await store.put("tasks", id: "t1", fields: ["title": "done already", "done": true, "due": 1])
            #expect(try await eventually { ids(model) == ["t1"] })
            _ = try await store.delete("tasks", id: "t1")
            #expect(try await eventually { if case .empty = model.state { true } else { false } })
        }
    }

    @Test func changingTheRequestQueriesAgainAndKeepsTheOldAnswerUntilThen() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            try await Self.fill(store)
            let model = LiveQuery(Query("tasks").filter(.equal("done", false)).sorted(by: "due"), in: store)
            #expect(try await eventually { ids(model) == ["t1", "t3", "t5"] })
            model.request = Query("tasks").filter(.equal("done", true)).sorted(by: "due", .descending)
            #expect(!model.isLoading, "the previous answer stays until the new one arrives")
            #expect(try await eventually { ids(model) == ["t4", "t2", "t0"] })
            // The new request is the one followed.
            _ = try await store.patch("tasks", id: "t1", fields: ["done": true])
            #expect(try await eventually { ids(model) == ["t4", "t2", "t1", "t0"] })
        }
    }

    @Test func aFailureIsShownAndRetryRunsTheQueryAgain() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            try await Self.fill(store)
            // No index on `title`: the query fails with the index to declare.
            let model = LiveQuery(Query("tasks").sorted(by: "title"), in: store)
            #expect(try await eventually { model.error != nil })
            #expect(model.error?.code == .indexRequired)
            #expect(model.error?.message.contains("title") == true)
            #expect(model.elements.isEmpty)
            model.request = Query("tasks").sorted(by: "title").allowingScan()
            #expect(try await eventually { ids(model)?.count == 6 })

            // A typed model that cannot decode an item fails; fixing the item and retrying loads.
            _ = try await store.put("tasks", id: "bad", fields: ["title": "no due date", "done": false])
            let tasks = store.collection(Task.self, named: "tasks")
            let typed = LiveQuery(tasks.query().where(\.done, .equals(false)).sorted(by: \.due), in: store)
            #expect(try await eventually { typed.error?.code == .typeMismatch })
            _ = try await store.patch("tasks", id: "bad", fields: ["due": 100])
            typed.retry()
            #expect(try await eventually { typed.elements.map(\.id) == ["t1", "t3", "t5", "bad"] })
            #expect(typed.elements.last == Task(id: "bad", title: "no due date", done: false, due: 100))
        }
    }

    @Test func withoutAStoreTheModelSaysSoAndLoadsOnceOneIsSet() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            try await Self.fill(store)
            let model = LiveQuery(Query("tasks").filter(.equal("done", false)).sorted(by: "due"), in: nil)
            #expect(model.error?.message.contains("no store") == true)
            model.store = store
            #expect(try await eventually { ids(model) == ["t1", "t3", "t5"] })
        }
    }

    @Test func replacingTheObservationCancelsThePreviousTask() async throws {
        let owner = ObservationTask()
        let first = _Concurrency.Task<Void, Never> { try? await _Concurrency.Task.sleep(for: .seconds(60)) }
        owner.replace(with: first)
        owner.replace(with: nil)
        #expect(first.isCancelled)
        let second = _Concurrency.Task<Void, Never> { try? await _Concurrency.Task.sleep(for: .seconds(60)) }
        var holder: ObservationTask? = ObservationTask()
        holder?.replace(with: second)
        holder = nil
        #expect(second.isCancelled, "a released model stops observing")
    }
}
