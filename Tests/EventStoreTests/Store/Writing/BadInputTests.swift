import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// Bad input gets a clear error with its code, through every write path, and changes nothing.
struct BadInputTests {
    static let hangul = "가"  // 3 UTF-8 bytes

    static let badChanges: [(name: String, change: Change, code: EventStoreError.Code)] = [
        ("empty collection", .put("", id: "x", fields: ["a": 1]), .invalidName),
        ("65-byte collection", .put(String(repeating: "c", count: 65), id: "x", fields: ["a": 1]), .invalidName),
        ("space in collection", .put("my notes", id: "x", fields: ["a": 1]), .invalidName),
        ("slash in collection", .put("a/b", id: "x", fields: ["a": 1]), .invalidName),
        ("colon in collection", .put("a:b", id: "x", fields: ["a": 1]), .invalidName),
        ("NUL in collection", .put("a\u{0}b", id: "x", fields: ["a": 1]), .invalidName),
        ("Hangul collection", .put("노트", id: "x", fields: ["a": 1]), .invalidName),
        ("accented collection", .put("café", id: "x", fields: ["a": 1]), .invalidName),
        ("empty item id", .put("notes", id: "", fields: ["a": 1]), .invalidName),
        ("256-byte item id", .put("notes", id: String(repeating: "i", count: 256), fields: ["a": 1]), .invalidName),
        (
            "258-byte Hangul item id", .put("notes", id: String(repeating: hangul, count: 86), fields: ["a": 1]),
            .invalidName
        ),
        ("NUL in item id", .put("notes", id: "a\u{0}b", fields: ["a": 1]), .invalidName),
        ("empty field name", .put("notes", id: "x", fields: ["": 1]), .invalidName),
        ("129-byte field name", .put("notes", id: "x", fields: [String(repeating: "f", count: 129): 1]), .invalidName),
        ("NUL in field name", .put("notes", id: "x", fields: ["a\u{0}": 1]), .invalidName),
        ("patch without fields", .patch("notes", id: "x", fields: [:]), .invalidEvent),
        (
            "delete with fields", Change(collection: "notes", item: "x", operation: .delete, fields: ["a": 1]),
            .invalidEvent
        ),
        ("infinity", .put("notes", id: "x", fields: ["a": .double(.infinity)]), .invalidEvent),
        ("minus infinity", .patch("notes", id: "x", fields: ["a": .double(-.infinity)]), .invalidEvent),
        ("NaN", .put("notes", id: "x", fields: ["a": .double(.nan)]), .invalidEvent),
        ("NaN in an array", .put("notes", id: "x", fields: ["a": [1, .double(.nan)]]), .invalidEvent),
        (
            "infinity in an object", .put("notes", id: "x", fields: ["a": ["b": ["c": .double(.infinity)]]]),
            .invalidEvent
        ),
        ("nested 33 deep", .put("notes", id: "x", fields: ["a": BadInputTests.nested(33)]), .invalidEvent),
        (
            "over maxEventBytes", .put("notes", id: "x", fields: ["a": .string(String(repeating: "x", count: 9_000))]),
            .eventTooLarge
        ),
    ]

    static func nested(_ depth: Int) -> Value {
        var value = Value.int(1)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }

    static var configuration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.maxEventBytes = 8_192
        configuration.maxBatchEvents = 50
        configuration.maxBatchBytes = 64 << 10
        return configuration
    }

    /// A store with some content, and a way to check that it did not change.
    static func withSeededStore(_ body: (Store, () throws -> Void) async throws -> Void) async throws {
        try await withTemporaryStore(configuration: configuration) { store in
            try await store.append(
                (0..<5).map { .put("notes", id: "n\($0)", fields: ["title": .string("note \($0)"), "tags": ["keep"]]) })
            let head = try store.head()
            let items = try ProjectionFixtures.items(store, in: "notes")
            let dump = try ProjectionFixtures.projectionBytes(store)
            try await body(store) { () throws in
                #expect(try store.head() == head)
                #expect(try ProjectionFixtures.items(store, in: "notes") == items)
                #expect(try ProjectionFixtures.projectionBytes(store) == dump)
            }
        }
    }

    // MARK: Changes and events

    @Test(arguments: 0..<BadInputTests.badChanges.count)
    func aBadChangeIsRefusedOnEveryPath(index: Int) async throws {
        let (name, change, code) = BadInputTests.badChanges[index]
        try await Self.withSeededStore { store, unchanged in
            await expectStoreError(code, "append: \(name)") { _ = try await store.append([change]) }
            await expectStoreError(code, "blocking append: \(name)") { _ = try store.append([change]) as [Event] }
            await expectStoreError(code, "validate: \(name)") { try store.validate([change]) }
            await expectStoreError(code, "write: \(name)") { _ = try await store.write { try $0.append(change) } }
            try unchanged()
        }
    }

    @Test(arguments: 0..<BadInputTests.badChanges.count)
    func theSameBadInputIsRefusedWhenIngested(index: Int) async throws {
        let (name, change, code) = BadInputTests.badChanges[index]
        let event = Event(
            id: EventID(origin: ReplicaID(high: 1, low: 2), sequence: 1),
            hlc: HLCTimestamp(physical: systemMilliseconds(), logical: 0),
            collection: change.collection, item: change.item, operation: change.operation, fields: change.fields)
        try await Self.withSeededStore { store, unchanged in
            await expectStoreError(code, "ingest: \(name)") { _ = try await store.ingest([event]) }
            await expectStoreError(code, "blocking ingest: \(name)") {
                _ = try store.ingest([event]) as Store.IngestResult
            }
            await expectStoreError(code, "writer.ingest: \(name)") {
                _ = try await store.write { try $0.ingest(event) }
            }
            try unchanged()
        }
    }

    @Test func limitsAreInclusive() async throws {
        try await Self.withSeededStore { store, _ in
            let collection = String(repeating: "c", count: 64)
            let id = String(repeating: BadInputTests.hangul, count: 85)  // 255 bytes
            let field = String(repeating: "f", count: 128)
            let event = try await store.put(
                collection, id: id, fields: [field: .string("ok"), "deep": BadInputTests.nested(32)])
            #expect(try store.item(collection, id)?[field] == "ok")
            #expect(try store.read { try $0.event(at: event.seq) } == event)
            #expect(try await store.append((0..<50).map { .put("notes", id: "b\($0)", fields: ["a": 1]) }).count == 50)
            #expect(try await store.put("ok-names_1.2", id: "any id: ümlaut / slash 🙂", fields: [:]).seq == 57)
            #expect(
                try store.item("ok-names_1.2", "any id: ümlaut / slash 🙂")?.fields == [:],
                "an empty put makes an empty item")
        }
    }

    @Test func oversizedBatchesAreRefused() async throws {
        try await Self.withSeededStore { store, unchanged in
            let tooMany = (0..<51).map { Change.put("notes", id: "b\($0)", fields: ["a": 1]) }
            await expectStoreError(.batchTooLarge, "51 changes") { _ = try await store.append(tooMany) }
            let tooManyEvents = (1...51).map {
                CoreFixtures.remote(
                    ReplicaID(high: 3, low: 3), UInt64($0),
                    at: HLCTimestamp(physical: systemMilliseconds(), logical: 0), item: "r\($0)", fields: ["a": 1])
            }
            await expectStoreError(.batchTooLarge, "51 events") { _ = try await store.ingest(tooManyEvents) }
            // 10 changes of 7 KiB each: every one fits, the batch does not (64 KiB).
            let heavy = (0..<10).map {
                Change.put("notes", id: "h\($0)", fields: ["a": .string(String(repeating: "h", count: 7_000))])
            }
            await expectStoreError(.batchTooLarge, "too many bytes") { _ = try await store.append(heavy) }
            try unchanged()
        }
    }

    @Test func metadataKeysAreChecked() async throws {
        try await Self.withSeededStore { store, unchanged in
            for key in ["", "store.replica", "store.anything", String(repeating: "k", count: 256)] {
                await expectStoreError(.invalidName, "key \(key.prefix(20))") {
                    _ = try await store.write { try $0.setMetadata([1], forKey: key) }
                }
            }
            try unchanged()
            #expect(try store.read { try $0.metadata(forKey: "store.format") } != nil, "the format entry is intact")
        }
    }

    // MARK: Opening

    @Test func aFileIsNotAStoreDirectory() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("notes.db")
        #expect(FileManager.default.createFile(atPath: file, contents: Data("hello".utf8)))
        await expectStoreError(.notADirectory) { _ = try Store.open(at: file) }
        await expectStoreError(.notADirectory, "a path below a file") { _ = try Store.open(at: file + "/store") }
        #expect(FileManager.default.contents(atPath: file) == Data("hello".utf8))
    }

    @Test func aGarbageDataFileIsNotAStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SeededGenerator(seed: 1)
        let garbage = Data((0..<(48 << 10)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        #expect(FileManager.default.createFile(atPath: directory.appending("data.mdb"), contents: garbage))
        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        await expectStoreError(.notAStore, "read-only") {
            _ = try Store.open(at: directory.path, configuration: readOnly)
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["data.mdb"],
            "a read-only open leaves no lock.mdb beside a file that is not a store")
        await expectStoreError(.notAStore) { _ = try Store.open(at: directory.path) }
        #expect(FileManager.default.contents(atPath: directory.appending("data.mdb")) == garbage, "left untouched")
    }

    @Test func anLMDBEnvironmentThatIsNotAStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        let other = try environment.write { try $0.openDatabase(named: "other", options: .create) }
        _ = try environment.write { try $0.put(bytes("value"), forKey: bytes("key"), in: other) }
        await expectStoreError(.notAStore) { _ = try Store.open(at: directory.path) }
        // Nothing was added to the foreign environment.
        let names = try environment.read { tx in
            var names: [String] = []
            try tx.forEach(in: try tx.openMainDatabase()) { key, _ in
                names.append(String(decoding: key, as: UTF8.self))
                return true
            }
            return names
        }
        #expect(names == ["other"])
        #expect(try environment.read { try $0.value(forKey: bytes("key"), in: other) } == bytes("value"))
    }

    @Test func aStoreWrittenByANewerFormatIsRefused() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.path)
        try await store.put("notes", id: "n1", fields: ["title": "x"])
        store.close()
        // `Environment.open` returns the instance the closed store still holds.
        let environment = try Environment.open(path: directory.path)
        #expect(environment === store.environment)
        let meta = try environment.write { try $0.openDatabase(named: "meta", options: []) }
        _ = try environment.write {
            try $0.put(withUnsafeBytes(of: UInt64(99).bigEndian, Array.init), forKey: bytes("store.format"), in: meta)
        }
        await expectStoreError(.unsupportedFormat) { _ = try Store.open(at: directory.path) }
        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        await expectStoreError(.unsupportedFormat, "read-only too") {
            _ = try Store.open(at: directory.path, configuration: readOnly)
        }
        let format = try environment.read { try $0.value(forKey: bytes("store.format"), in: meta) }
        #expect(format == withUnsafeBytes(of: UInt64(99).bigEndian, Array.init), "the newer store is left as it was")
    }

    @Test func aMissingStoreOpenedReadOnlyIsNotFound() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        await expectStoreError(.notFound) {
            _ = try Store.open(at: directory.appending("missing"), configuration: readOnly)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("missing")))
    }

    @Test func aProjectionWithABadNameIsRefusedAtOpen() async throws {
        struct Named: Projection {
            let name = "bad name!"
            let version = 1
            let databases = ["d"]
            func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {}
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Store.Configuration()
        configuration.projections = [Named()]
        await expectStoreError(.invalidName) { _ = try Store.open(at: directory.path, configuration: configuration) }
    }

}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
