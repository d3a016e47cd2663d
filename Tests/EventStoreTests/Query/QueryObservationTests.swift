import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Live queries: the current answer at once, then a new answer only when a commit changed it.
struct QueryObservationTests {
    static func configuration() -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        configuration.indexes = [IndexDefinition("tasks", fields: ["done", "due"])]
        return configuration
    }

    /// Collects what a live query yields, in a task.
    final class Collector: Sendable {
        final class Box: Sendable {
            let pages = Mutex<[QueryPage]>([])
            let failure = Mutex<String?>(nil)
        }
        let box = Box()
        let task: Task<Void, Never>

        var all: [QueryPage] { box.pages.withLock { $0 } }
        var failureText: String? { box.failure.withLock { $0 } }

        init(_ sequence: QueryObservation) {
            let box = self.box
            task = Task {
                do {
                    for try await page in sequence { box.pages.withLock { $0.append(page) } }
                } catch {
                    box.failure.withLock { $0 = "\(error)" }
                }
            }
        }

        var count: Int { all.count }
        var last: QueryPage? { all.last }

        /// Waits until at least `count` pages arrived (or 5 s passed).
        /// Waits for `count` answers; the bound only catches a hang (a starved CI run on two cores
        /// gave the first answer more than 5 s).
        func wait(for count: Int) async throws {
            let deadline = Date().addingTimeInterval(60)
            while self.count < count, Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        }
    }

    @Test func yieldsTheCurrentAnswerThenOnlyChangedAnswers() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            _ = try await store.append(
                (0..<20).map {
                    .put("tasks", id: "t\($0)", fields: ["done": .bool($0 % 2 == 0), "due": .int(Int64($0))])
                })
            let query = Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(3)
            let collector = Collector(store.observe(query))
            defer { collector.task.cancel() }
            try await collector.wait(for: 1)
            #expect(collector.last?.items.map(\.id) == ["t1", "t3", "t5"])

            // Commits that do not change the answer yield nothing.
            _ = try await store.put("notes", id: "n1", fields: ["title": "elsewhere"])
            _ = try await store.put("tasks", id: "t100", fields: ["done": true, "due": 0])
            _ = try await store.put("tasks", id: "t101", fields: ["done": false, "due": 99])
            _ = try await store.patch("tasks", id: "t3", fields: ["due": 3])
            try await Task.sleep(for: .milliseconds(200))
            #expect(collector.count == 1)

            // One that does, once.
            _ = try await store.put("tasks", id: "t102", fields: ["done": false, "due": -1])
            try await collector.wait(for: 2)
            #expect(collector.count == 2)
            #expect(collector.last?.items.map(\.id) == ["t102", "t1", "t3"])
            _ = try await store.delete("tasks", id: "t102")
            try await collector.wait(for: 3)
            #expect(collector.last?.items.map(\.id) == ["t1", "t3", "t5"])

            // A burst is coalesced, and the last answer is the current one.
            for number in 0..<40 {
                _ = try await store.patch("tasks", id: "t\(number % 20)", fields: ["due": .int(Int64(100 - number))])
            }
            let expected = try store.query(query)
            let deadline = Date().addingTimeInterval(60)
            while collector.last != expected, Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
            #expect(collector.last == expected)
            let pages = collector.all
            #expect(pages.count <= 3 + 40)
            for (previous, next) in zip(pages, pages.dropFirst()) {
                #expect(!QueryObservation.sameAnswer(previous, next), "never the same answer twice in a row")
            }
            #expect(collector.failureText == nil)
        }
    }

    /// A complete answer (no next page) is not re-run for items outside it that do not match:
    /// only the changes that matter show, and the answers stay current.
    /// The rows after the page matter too: when the only one goes (deleted, or no longer
    /// matching), the answer loses its next cursor, and a "load more" must go with it.
    @Test func theNextCursorGoesWithTheLastRowAfterThePage() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            _ = try await store.append(
                (0..<5).map { .put("tasks", id: "t\($0)", fields: ["done": false, "due": .int(Int64($0))]) })
            let query = Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(3)
            let collector = Collector(store.observe(query))
            defer { collector.task.cancel() }
            try await collector.wait(for: 1)
            #expect(collector.last?.next != nil)
            _ = try await store.delete("tasks", id: "t4")
            try await Task.sleep(for: .milliseconds(100))
            #expect(collector.count == 1, "t3 still follows the page")
            _ = try await store.patch("tasks", id: "t3", fields: ["done": true])
            try await collector.wait(for: 2)
            #expect(collector.last?.items.map(\.id) == ["t0", "t1", "t2"])
            #expect(collector.last?.next == nil)
            #expect(collector.last == (try store.query(query)))
        }
    }

    /// A value rewritten with other bytes that `==` calls equal (another Unicode normalization of
    /// the same text) is a change.
    @Test func anotherSpellingOfTheSameTextIsAChange() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            _ = try await store.put("tasks", id: "t1", fields: ["done": false, "due": 1, "title": "caf\u{E9}"])
            let query = Query("tasks").filter(.equal("done", false)).sorted(by: "due")
            let collector = Collector(store.observe(query))
            defer { collector.task.cancel() }
            try await collector.wait(for: 1)
            _ = try await store.patch("tasks", id: "t1", fields: ["title": "cafe\u{301}"])
            try await collector.wait(for: 2)
            let title = try #require(collector.last?.items.first?["title"]?.stringValue)
            #expect(Array(title.utf8) == Array("cafe\u{301}".utf8))
        }
    }

    @Test func completeAnswersFollowOnlyTheirItems() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            _ = try await store.append(
                (0..<6).map {
                    .put("tasks", id: "t\($0)", fields: ["done": .bool($0 % 2 == 0), "due": .int(Int64($0))])
                })
            let query = Query("tasks").filter(.equal("done", false)).sorted(by: "due")
            let collector = Collector(store.observe(query))
            defer { collector.task.cancel() }
            try await collector.wait(for: 1)
            #expect(collector.last?.items.map(\.id) == ["t1", "t3", "t5"])
            _ = try await store.put("tasks", id: "t10", fields: ["done": true, "due": 0])
            _ = try await store.patch("tasks", id: "t0", fields: ["due": 7])
            _ = try await store.delete("tasks", id: "t2")
            try await Task.sleep(for: .milliseconds(150))
            #expect(collector.count == 1)
            _ = try await store.patch("tasks", id: "t3", fields: ["done": true])  // leaves the answer
            try await collector.wait(for: 2)
            #expect(collector.last?.items.map(\.id) == ["t1", "t5"])
            _ = try await store.patch("tasks", id: "t4", fields: ["done": false])  // joins it
            try await collector.wait(for: 3)
            #expect(collector.last?.items.map(\.id) == ["t1", "t4", "t5"])
            _ = try await store.patch("tasks", id: "t5", fields: ["due": 0])  // moves within it
            try await collector.wait(for: 4)
            #expect(collector.last?.items.map(\.id) == ["t5", "t1", "t4"])
            #expect(collector.last == (try store.query(query)))
        }
    }

    @Test func aQueryNoIndexServesFails() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            var iterator = store.observe(Query("tasks").sorted(by: "title")).makeAsyncIterator()
            let error = try await #require(throws: EventStoreError.self) { _ = try await iterator.next() }
            #expect(error.code == .indexRequired)
        }
    }

    @Test func endsWhenTheStoreCloses() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.path, configuration: Self.configuration())
        let collector = Collector(store.observe(Query("tasks").sorted(by: "done")))
        try await collector.wait(for: 1)
        store.close()
        try await CoreFixtures.value(of: Task { await collector.task.value }, timeout: 5)
        #expect(collector.count == 1)
    }

    // MARK: Narrowed change streams

    @Test func changesOfOneCollectionOrSomeItems() async throws {
        try await withTemporaryStore(configuration: Self.configuration()) { store in
            // More than a chunk of other events before the ones asked for.
            _ = try await store.append((0..<600).map { .put("notes", id: "n\($0)", fields: ["v": .int(Int64($0))]) })
            _ = try await store.put("tasks", id: "a", fields: ["v": 1])
            _ = try await store.put("tasks", id: "b", fields: ["v": 1])
            let consumer = Task { () throws -> [String] in
                var seen: [String] = []
                for try await change in store.changes(after: 0, in: "tasks", ids: ["b", "c"]) {
                    seen.append("\(change.id)@\(change.seq)")
                    if seen.count == 3 { break }
                }
                return seen
            }
            let all = Task { () throws -> [String] in
                var seen: [String] = []
                for try await change in store.changes(after: 0, in: "tasks") {
                    seen.append(change.id)
                    if seen.count == 4 { break }
                }
                return seen
            }
            _ = try await store.append((0..<300).map { .put("notes", id: "m\($0)", fields: [:]) })
            _ = try await store.put("tasks", id: "c", fields: ["v": 2])
            _ = try await store.put("tasks", id: "a", fields: ["v": 2])
            _ = try await store.delete("tasks", id: "b")
            #expect(try await CoreFixtures.value(of: consumer, timeout: 10) == ["b@602", "c@903", "b@905"])
            #expect(try await CoreFixtures.value(of: all, timeout: 10) == ["a", "b", "c", "a"])
        }
    }
}
