import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// Bad input gets its error and changes nothing.
struct BadInputGuaranteeTests {
    static let cases: [(String, Change, EventStoreError.Code)] = [
        ("empty collection", .put("", id: "x", fields: ["a": 1]), .invalidName),
        ("long collection", .put(String(repeating: "c", count: 65), id: "x", fields: ["a": 1]), .invalidName),
        ("slash in collection", .put("a/b", id: "x", fields: ["a": 1]), .invalidName),
        ("empty id", .put("notes", id: "", fields: ["a": 1]), .invalidName),
        ("long id", .put("notes", id: String(repeating: "i", count: 256), fields: ["a": 1]), .invalidName),
        ("NUL in id", .put("notes", id: "a\u{0}b", fields: ["a": 1]), .invalidName),
        ("empty field name", .put("notes", id: "x", fields: ["": 1]), .invalidName),
        ("long field name", .put("notes", id: "x", fields: [String(repeating: "f", count: 129): 1]), .invalidName),
        ("patch without fields", .patch("notes", id: "x", fields: [:]), .invalidEvent),
        (
            "delete with fields", Change(collection: "notes", item: "x", operation: .delete, fields: ["a": 1]),
            .invalidEvent
        ),
        ("infinite number", .put("notes", id: "x", fields: ["a": .double(.infinity)]), .invalidEvent),
        ("NaN", .put("notes", id: "x", fields: ["a": .double(.nan)]), .invalidEvent),
    ]

    @Test(arguments: 0..<BadInputGuaranteeTests.cases.count)
    func badChangesAreRefusedAndChangeNothing(index: Int) async throws {
        let (name, change, code) = BadInputGuaranteeTests.cases[index]
        try await withTemporaryStore { store in
            try await store.put("notes", id: "keep", fields: ["title": "kept"])
            await expectStoreError(code, Comment(rawValue: name)) { _ = try await store.append([change]) }
            #expect(try store.head() == 1)
            #expect(try store.item("notes", "keep")?["title"] == "kept")
        }
    }

    @Test func oversizedEventsAndBatchesAreRefused() async throws {
        var configuration = Store.Configuration()
        configuration.maxEventBytes = 1_000
        configuration.maxBatchEvents = 10
        try await withTemporaryStore(configuration: configuration) { store in
            await expectStoreError(.eventTooLarge) {
                _ = try await store.put(
                    "notes", id: "big", fields: ["a": .string(String(repeating: "x", count: 2_000))])
            }
            await expectStoreError(.batchTooLarge) {
                _ = try await store.append((0..<11).map { .put("notes", id: "n\($0)", fields: ["a": 1]) })
            }
            let head = try store.head()
            #expect(head == 0)
        }
    }

    @Test func aFileIsNotAStoreDirectory() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        await expectStoreError(.notADirectory) { _ = try Store.open(at: file) }
    }

    @Test func garbageDataFileIsNotAStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        _ = FileManager.default.createFile(
            atPath: directory.appending("data.mdb"), contents: Data(repeating: 0xAB, count: 64 << 10))
        await expectStoreError(.notAStore) { _ = try Store.open(at: directory.path) }
        let bytes = FileManager.default.contents(atPath: directory.appending("data.mdb"))
        #expect(bytes == Data(repeating: 0xAB, count: 64 << 10), "the foreign file is left untouched")
    }

    @Test func aForeignLMDBEnvironmentIsNotAStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let environment = try Environment.open(path: directory.path)
            let db = try environment.write { try $0.openDatabase(named: "other", options: .create) }
            _ = try environment.write { try $0.put([1], forKey: [1], in: db) }
        }
        await expectStoreError(.notAStore) { _ = try Store.open(at: directory.path) }
    }

    @Test func aStoreFromANewerFormatIsRefused() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try Store.open(at: directory.path)
            try await store.put("notes", id: "n1", fields: ["a": 1])
            store.close()
            let environment = try Environment.open(path: directory.path)
            let meta = try environment.write { try $0.openDatabase(named: "meta", options: []) }
            _ = try environment.write { try $0.put(Keys.seq(99), forKey: Array("store.format".utf8), in: meta) }
        }
        await expectStoreError(.unsupportedFormat) { _ = try Store.open(at: directory.path) }
    }
}
