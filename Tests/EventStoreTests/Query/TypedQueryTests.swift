import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Typed queries: key paths on `Codable` models, the same plans and answers as untyped ones.
struct TypedQueryTests {
    struct Task: Codable, Identifiable, Sendable, Equatable {
        struct Detail: Codable, Sendable, Equatable { var note: String }
        var id: String
        var title: String
        var done: Bool
        var due: Date
        var folder: String?
        var detail: Detail?
        var computed: Int { title.count }
    }

    static func configuration() -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.indexes = [
            IndexDefinition("tasks", fields: ["done", "due"]), IndexDefinition("tasks", fields: ["folder", "title"]),
        ]
        return configuration
    }

    static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func fill(_ tasks: TypedCollection<Task>) async throws {
        var models: [Task] = []
        for number in 0..<12 {
            let hours = Double((number * 5) % 12)
            let folder: String? = number % 4 == 0 ? nil : "f\(number % 2)"
            models.append(
                Task(
                    id: "t\(number)", title: "task \(number)", done: number % 3 == 0,
                    due: start.addingTimeInterval(hours * 3600), folder: folder))
        }
        try await tasks.put(models)
    }

    /// A model whose coding keys rename its properties: queries, sorts and patches by key path
    /// use the fields the items hold, not the properties' names.
    struct Renamed: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var title: String
        var dueDate: Date
        var isDone: Bool
        enum CodingKeys: String, CodingKey { case id, title = "name", dueDate = "due_date", isDone = "done" }
    }

    @Test func keyPathsNameTheCodingKeysFields() async throws {
        var configuration = Store.Configuration()
        configuration.indexes = [IndexDefinition("renamed", fields: ["done", "due_date"])]
        try await withTemporaryStore(configuration: configuration) { store in
            let tasks = store.collection(Renamed.self, named: "renamed")
            let models = (0..<6).map {
                Renamed(
                    id: "r\($0)", title: "task \($0)",
                    dueDate: Self.start.addingTimeInterval(Double(($0 * 7) % 6) * 60),
                    isDone: $0 % 2 == 0)
            }
            try await tasks.put(models)
            #expect(try store.item("renamed", "r1")?["due_date"] != nil)
            let open = try tasks.fetch(tasks.query().where(\.isDone, .equals(false)).sorted(by: \.dueDate))
            let expected = models.filter { !$0.isDone }.sorted { $0.dueDate < $1.dueDate }
            #expect(open.models == expected)
            #expect(!open.models.isEmpty)
            try await tasks.patch(id: "r1", \.title, to: "patched")
            #expect(try tasks.get("r1")?.title == "patched")
            #expect(try store.item("renamed", "r1")?["title"] == nil)
        }
    }

    @Test func keyPathQueriesMatchTheirUntypedForm() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            let tasks = store.collection(Task.self, named: "tasks")
            try await Self.fill(tasks)
            let query = tasks.query().where(\.done, .equals(false)).where(
                \.due, .atLeast(Self.start.addingTimeInterval(3600))
            )
            .sorted(by: \.due, .descending).limit(3)
            var models: [Task] = []
            var page = try tasks.fetch(query)
            models += page.models
            while let next = page.next {
                page = try tasks.fetch(query.after(next))
                models += page.models
            }
            let all = try tasks.all(limit: 100).models
            let expected = all.filter { !$0.done && $0.due >= Self.start.addingTimeInterval(3600) }
                .sorted {
                    $0.due != $1.due ? $0.due > $1.due : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) == false
                }
            #expect(models == expected)
            #expect(try tasks.count(query) == expected.count)

            let missing = try tasks.fetch(
                tasks.query().where(\.folder, .isMissing).sorted(by: \.folder).sorted(by: \.title))
            #expect(missing.models.map(\.id) == ["t0", "t4", "t8"])
            let prefixed = try tasks.fetch(
                tasks.query().where(\.folder, .equals("f1")).where(\.title, .hasPrefix("task 1")))
            #expect(prefixed.models.map(\.id) == ["t1", "t11"])
            let oneOf = try tasks.fetch(tasks.query().where(\.folder, .isIn(["f0", "f1"])).allowingScan())
            #expect(oneOf.models.count == 9)
            // A nil optional is stored as no field: `.equals(nil)` finds it as `.isMissing` does,
            // and `.notEquals(nil)`, which no filter can answer, is refused rather than answered
            // wrongly.
            let nilFolder = try tasks.fetch(tasks.query().where(\.folder, .equals(nil)).allowingScan())
            #expect(nilFolder.models.map(\.id).sorted() == ["t0", "t4", "t8"])
            let error = try #require(throws: EventStoreError.self) {
                try tasks.fetch(tasks.query().where(\.folder, .notEquals(nil)).allowingScan())
            }
            #expect(error.code == .invalidQuery && error.message.contains("notEquals(nil)"), "\(error)")
        }
    }

    @Test func keyPathsThatNameNoStoredPropertyAreRefused() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            let tasks = store.collection(Task.self, named: "tasks")
            try await Self.fill(tasks)
            for query in [
                tasks.query().where(\.detail?.note, .equals("x")), tasks.query().sorted(by: \.computed),
                tasks.query().where(\.title.count, .greaterThan(3)),
            ] {
                let error = try #require(throws: EventStoreError.self) { try tasks.fetch(query) }
                #expect(error.code == .invalidQuery)
                #expect(error.message.contains("does not name a stored property"))
            }
            // The id is the item's, not a field: a condition or sort on it would match nothing.
            for query in [
                tasks.query().where(\.id, .isIn(["t1", "t2"])).allowingScan(), tasks.query().sorted(by: \.id),
            ] {
                let error = try #require(throws: EventStoreError.self) { try tasks.fetch(query) }
                #expect(error.code == .invalidQuery && error.message.contains("names the model's id"), "\(error)")
            }
            // An undeclared index names the fields as the model stores them.
            let error = try #require(throws: EventStoreError.self) {
                try tasks.fetch(tasks.query().sorted(by: \.title))
            }
            #expect(error.code == .indexRequired)
            #expect(error.message.contains("tasks(title)"))
        }
    }

    /// Typed queries decode models from records that hold sets and counters (format 2) as from
    /// plain ones, and give a model the schema's default for a field its item lacks.
    @Test func modelsDecodeFromMergedRecordsAndTakeTheSchemasDefaults() async throws {
        struct Note: Codable, Identifiable, Sendable, Equatable {
            var id: String
            var folder: String
            var tags: [String]
            var views: Int64
            var pinned: Bool
        }
        var notes = CollectionSchema("notes", version: 1, defaults: ["pinned": false])
        notes.merge("tags", as: .addWinsSet)
        notes.merge("views", as: .counter)
        var configuration = Store.Configuration()
        configuration.schemas = [notes]
        configuration.indexes = [IndexDefinition("notes", fields: ["folder"])]
        try await withTemporaryStore(configuration: configuration) { store in
            try await store.append([
                .put("notes", id: "a", fields: ["folder": "f", "pinned": true]),
                .edit("notes", id: "a", ["tags": .add(["x", "y"])]),
                .increment("notes", id: "a", field: "views", by: 2),
                .put("notes", id: "b", fields: ["folder": "f"]),
                .put("notes", id: "c", fields: ["folder": "g"]),
            ])
            let typed = store.collection(Note.self, named: "notes")
            let page = try typed.fetch(typed.query().where(\.folder, .equals("f")))
            #expect(
                page.models == [
                    Note(id: "a", folder: "f", tags: ["x", "y"], views: 2, pinned: true),
                    Note(id: "b", folder: "f", tags: [], views: 0, pinned: false),
                ])
            // The same models as reading each one.
            #expect(try page.models.map { try typed.get($0.id) } == page.models)
        }
    }

    @Test func typedLiveQuery() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            let tasks = store.collection(Task.self, named: "tasks")
            try await Self.fill(tasks)
            var iterator = tasks.observe(tasks.query().where(\.folder, .equals("f0")).sorted(by: \.title))
                .makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.models.map(\.id) == ["t10", "t2", "t6"])
            try await tasks.put(Task(id: "t20", title: "a first", done: false, due: Self.start, folder: "f0"))
            let second = try await iterator.next()
            #expect(second?.models.map(\.id) == ["t20", "t10", "t2", "t6"])
        }
    }
}
