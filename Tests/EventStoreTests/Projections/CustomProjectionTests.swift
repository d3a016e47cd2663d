import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Application projections: kept in step with the items by every write, rebuilt from the log on
/// demand and when their version changes, and rolled back with the write that fails.
struct CustomProjectionTests {
    typealias F = ProjectionFixtures

    /// Counts the calls of a projection, shared by its copies.
    final class Calls: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func record() { count.withLock { $0 += 1 } }
    }

    /// Items per tag (the example of the `Projection` documentation). Version 2 counts only
    /// items that are not done, under `open:<tag>`, so a rebuild is visible in the data.
    struct NotesPerTag: Projection {
        let name = "notes-per-tag"
        var version = 1
        let databases = ["counts"]
        var calls = Calls()

        func keys(_ item: Item?) -> Set<String> {
            guard let item else { return [] }
            let tags = Set(item["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            if version == 1 { return tags }
            guard item["done"] != true else { return [] }
            return Set(tags.map { "open:\($0)" })
        }

        func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
            calls.record()
            let before = keys(change.before)
            let after = keys(change.after)
            for tag in after.subtracting(before) { try context.add(1, to: tag, in: "counts") }
            for tag in before.subtracting(after) { try context.add(-1, to: tag, in: "counts") }
        }

        /// What the projection should hold, computed from the items.
        func expected(_ store: Store) throws -> [String: Int64] {
            var counts: [String: Int64] = [:]
            for collection in try store.read({ try $0.collections() }) {
                for item in try F.items(store, in: collection) {
                    for key in keys(item) { counts[key, default: 0] += 1 }
                }
            }
            return counts
        }
    }

    /// Refuses events whose fields hold `"boom"`.
    struct Refusing: Projection {
        struct Refused: Error {}
        let name = "refusing"

        /// Whether `error` is the projection's refusal, as thrown or wrapped by the store.
        static func refused(_ error: any Error) -> Bool {
            error is Refused || ((error as? EventStoreError)?.cause is Refused)
        }
        let version = 1
        let databases = ["seen"]

        func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
            if change.event.fields.values.contains("boom") { throw Refused() }
            try context.setValue([1], forKey: Array(change.event.item.utf8), in: "seen")
        }
    }

    static func stored(_ store: Store) throws -> [String: Int64] {
        let entries = try store.read { try $0.projectionEntries(projection: "notes-per-tag", database: "counts") }
        return Dictionary(
            uniqueKeysWithValues: entries.map { (String(decoding: $0.key, as: UTF8.self), Counter.decode($0.value)) })
    }

    @Test func countsFollowTheItemsThroughWritesAndRebuilds() async throws {
        let clock = ManualClock()
        var configuration = F.configuration(clock: clock)
        let projection = NotesPerTag()
        configuration.projections = [projection]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            try await RebuildTests.workload(store, clock: clock, seed: 31, rounds: 20)
            let expected = try projection.expected(store)
            #expect(expected.count >= 5, "the workload uses many tags")
            #expect(try Self.stored(store) == expected)
            #expect(
                try store.read {
                    try $0.projectionValue(forKey: Array("회의".utf8), projection: "notes-per-tag", database: "counts")
                }
                .map(Counter.decode) == expected["회의"])
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")

            try await store.rebuildProjections()
            #expect(try Self.stored(store) == expected)
            #expect(try store.verify().isConsistent)
            // Deleting every item brings every counter back to zero, and zero counters are removed.
            let ids = try store.read { reader in
                try reader.collections().flatMap { c in try F.items(store, in: c).map { (c, $0.id) } }
            }
            try await store.append(ids.map { Change.delete($0.0, id: $0.1) })
            #expect(try Self.stored(store).isEmpty)
        }
    }

    /// A read-only open (an app extension, before the updated app opened the store) that
    /// registers a projection the store has no databases of yet says so, not "not a store".
    @Test func aReadOnlyOpenWithAProjectionTheStoreLacksSaysWhich() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("store")
        try Store.open(at: path).close()
        var configuration = Store.Configuration()
        configuration.readOnly = true
        configuration.projections = [TagCounts()]
        let error = try #require(throws: EventStoreError.self) {
            try Store.open(at: path, configuration: configuration)
        }
        #expect(error.code == .configurationMismatch, "\(error)")
        #expect(error.message.contains("tag-counts"), "\(error)")
    }

    @Test func aNewVersionIsRebuiltAtOpenAndTheSameVersionIsNot() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        var configuration = F.configuration(clock: clock)
        configuration.projections = [NotesPerTag()]
        var head: UInt64 = 0
        do {
            let store = try Store.open(at: directory.path, configuration: configuration)
            try await RebuildTests.workload(store, clock: clock, seed: 8, rounds: 10)
            try await store.put("notes", id: "done", fields: ["tags": ["work"], "done": true])
            head = try store.head()
            store.close()
        }
        // Same version: opened as is, nothing replayed.
        let same = NotesPerTag()
        configuration.projections = [same]
        do {
            let store = try Store.open(at: directory.path, configuration: configuration)
            #expect(same.calls.value == 0)
            #expect(try Self.stored(store) == (try same.expected(store)))
            store.close()
        }
        // Version 2: every event replayed into the new logic.
        let bumped = NotesPerTag(version: 2)
        configuration.projections = [bumped]
        let store = try Store.open(at: directory.path, configuration: configuration)
        defer { store.close() }
        #expect(bumped.calls.value == Int(head))
        let expected = try bumped.expected(store)
        #expect(expected.keys.allSatisfy { $0.hasPrefix("open:") } && !expected.isEmpty)
        #expect(try Self.stored(store) == expected)
        #expect(try store.verify().isConsistent)
    }

    @Test func aFailingProjectionRollsBackItsWriteAlone() async throws {
        var configuration = F.configuration()
        configuration.projections = [Refusing()]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            try await store.put("notes", id: "first", fields: ["title": "ok"])
            await #expect {
                try await store.append([
                    .put("notes", id: "a", fields: ["title": "fine"]),
                    .put("notes", id: "b", fields: ["title": "boom"]),
                ])
            } throws: { Refusing.refused($0) }
            #expect(try store.head() == 1)
            #expect(try store.item("notes", "a") == nil)
            // Among concurrent writers sharing a commit, only the refused one fails.
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        do {
                            try await store.put(
                                "notes", id: "c\(index)", fields: ["title": index == 13 ? "boom" : "fine"])
                            return true
                        } catch  where Refusing.refused(error) {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { !$0 }.count == 1)
            #expect(try store.head() == 30)
            #expect(try store.count(in: "notes") == 30)
            #expect(try store.item("notes", "c13") == nil)
            let seen = try store.read { try $0.projectionEntries(projection: "refusing", database: "seen") }
            #expect(seen.count == 30)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func projectionNamesAndDatabasesAreChecked() async throws {
        struct BadName: Projection {
            let name = "no spaces allowed"
            let version = 1
            let databases = ["x"]
            func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {}
        }
        struct WrongDatabase: Projection {
            let name = "wrong-db"
            let version = 1
            let databases = ["x"]
            func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
                try context.setValue([1], forKey: [1], in: "undeclared")
            }
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = F.configuration()
        configuration.projections = [BadName()]
        await expectStoreError(.invalidName) { _ = try Store.open(at: directory.path, configuration: configuration) }

        configuration.projections = [WrongDatabase()]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            await expectStoreError(.projection) { try await store.put("notes", id: "n", fields: ["a": 1]) }
            #expect(try store.head() == 0)
            await expectStoreError(.projection) {
                _ = try store.read { try $0.projectionEntries(projection: "wrong-db", database: "undeclared") }
            }
        }
    }
}
