import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// The store records the configuration it is built with, and opening it with another one is
/// never silent (``Store/SearchChange``).
struct SearchChangeTests {
    typealias F = ProjectionFixtures
    typealias NotesPerTag = CustomProjectionTests.NotesPerTag

    /// Tasks indexed by `title` and `notes` (not the default fields).
    static func custom(_ change: Store.SearchChange = .refuse) -> Store.Configuration {
        var configuration = F.configuration()
        configuration.search.collections["tasks"] = [.init(name: "title", weight: 4), .init(name: "notes", weight: 1)]
        configuration.searchChange = change
        return configuration
    }

    static func open(_ path: String, _ configuration: Store.Configuration) throws -> Store {
        try Store.open(at: path, configuration: configuration)
    }

    /// Writes two tasks: one findable by its `notes` field only, one by its `content` field only.
    static func writeTasks(_ store: Store) async throws {
        try await store.put("tasks", id: "t1", fields: ["title": "Groceries", "notes": "oat milk"])
        try await store.put("tasks", id: "t2", fields: ["title": "Errands", "content": "post office"])
        try await store.put("notes", id: "n1", fields: ["title": "Sync design", "tags": ["work"]])
    }

    /// Creates a store in `directory` with `configuration`, writes ``writeTasks(_:)``, runs `then`
    /// on it, and closes it.
    static func makeStore(
        in directory: TemporaryDirectory, _ configuration: Store.Configuration = custom(),
        then: (Store) throws -> Void = { _ in }
    ) async throws {
        let store = try open(directory.path, configuration)
        defer { store.close() }
        try await writeTasks(store)
        try then(store)
    }

    static func ids(_ store: Store, _ text: String) throws -> [String] {
        try store.search(text, in: "tasks").map(\.item.id)
    }

    static func record(_ store: Store) throws -> ConfigurationRecord? {
        try store.read { try $0.configurationRecord() }
    }

    /// Writes raw bytes (or removes them) under the record's key, behind the engine's back.
    static func overwriteRecord(_ store: Store, with bytes: [UInt8]?) throws {
        try store.environment.write { tx in
            let key = Array(Meta.configuration.utf8)
            if let bytes {
                try tx.put(bytes, forKey: key, in: store.schema.meta)
            } else {
                _ = try tx.delete(key, in: store.schema.meta)
            }
        }
    }

    static func code(_ body: () throws -> Void) -> EventStoreError? {
        do {
            try body()
            return nil
        } catch {
            return error as? EventStoreError
        }
    }

    // MARK: Recording

    @Test func aNewStoreRecordsItsConfiguration() throws {
        let configuration = Self.custom()
        try withTemporaryStore(configuration: configuration) { (store: Store) throws in
            let record = try #require(try Self.record(store))
            #expect(record.search == configuration.search.canonical)
            #expect(record.tokenizerVersion == Tokenizer.version)
            #expect(record.projections.isEmpty)
        }
    }

    @Test func anOldStoreWithoutARecordGetsOneOnItsFirstWritableOpen() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(in: directory) { (store: Store) throws in
            try Self.overwriteRecord(store, with: nil)
        }
        do {
            var readOnly = Self.custom()
            readOnly.readOnly = true
            let store = try Self.open(directory.path, readOnly)
            #expect(try Self.record(store) == nil, "a read-only open records nothing")
            store.close()
        }
        do {
            var tool = Store.Configuration()
            tool.searchChange = .useStored
            let store = try Self.open(directory.path, tool)
            #expect(try Self.record(store) == nil, "an open that uses the store's own records nothing it does not know")
            store.close()
        }
        let store = try Self.open(directory.path, Self.custom())
        defer { store.close() }
        #expect(try Self.record(store)?.search == Self.custom().search.canonical)
        #expect(try Self.ids(store, "milk") == ["t1"])
    }

    // MARK: Changes

    @Test func openingWithOtherFieldsFailsAndNamesTheDifference() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(in: directory)
        let error = Self.code { _ = try Self.open(directory.path, F.configuration()) }
        #expect(error?.code == .configurationMismatch)
        #expect(error?.message.contains("collection \"tasks\"") == true, "\(String(describing: error))")
        #expect(error?.message.contains("searchChange = .reindex") == true)

        // The same fields in another order are the same configuration.
        var reordered = Self.custom()
        reordered.search.collections["tasks"]?.reverse()
        let store = try Self.open(directory.path, reordered)
        defer { store.close() }
        #expect(try Self.ids(store, "milk") == ["t1"])
    }

    @Test func reopeningAnOpenStoreWithAnotherConfigurationIsAnErrorNotTheOldInstance() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path, Self.custom())
        defer { store.close() }
        // The same declaration, fields in another order: the same instance.
        var reordered = Self.custom()
        reordered.search.collections["tasks"]?.reverse()
        #expect(try Self.open(directory.path, reordered) === store)
        // Other fields, even with a declared reindex, or another index: refused while it is open.
        for other in [F.configuration(), Self.custom(.reindex).withIndex()] {
            let error = Self.code { _ = try Self.open(directory.path, other) }
            #expect(error?.code == .configurationMismatch, "\(String(describing: error))")
            #expect(error?.message.contains("already open in this process") == true)
        }
        // Read-only opens and tools that use the stored configuration take the instance as it is.
        var readOnly = F.configuration()
        readOnly.readOnly = true
        #expect(try Self.open(directory.path, readOnly) === store)
        #expect(try Self.open(directory.path, Self.custom(.useStored)) === store)
        // An open that registers a projection the instance does not run would see it go stale.
        var withProjection = Self.custom()
        withProjection.projections = [NotesPerTag()]
        #expect(Self.code { _ = try Self.open(directory.path, withProjection) }?.code == .configurationMismatch)
        // Once closed, another configuration opens (and is checked against the record as usual).
        store.close()
        let reopened = try Self.open(directory.path, Self.custom(.reindex).withIndex())
        defer { reopened.close() }
        #expect(reopened !== store)
    }

    @Test func aDeclaredReindexRecordsAndRebuildsWithTheNewFields() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(in: directory) { (store: Store) throws in
            #expect(try Self.ids(store, "milk") == ["t1"])
            #expect(try Self.ids(store, "office").isEmpty)
        }
        var defaults = F.configuration()
        defaults.searchChange = .reindex
        let store = try Self.open(directory.path, defaults)
        defer { store.close() }
        #expect(try Self.ids(store, "milk").isEmpty, "notes is no longer searchable")
        #expect(try Self.ids(store, "office") == ["t2"], "content is searchable now")
        #expect(try Self.record(store)?.search == SearchConfiguration().canonical)
        #expect(try store.read { try Meta.rebuildIsNeeded($0.tx, store.schema.meta) } == false)
        #expect(try store.verify().isConsistent)
    }

    @Test func readOnlyAndUseStoredOpensSearchWithTheRecordedConfiguration() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(in: directory)
        for readOnly in [true, false] {
            var configuration = F.configuration()
            configuration.readOnly = readOnly
            configuration.searchChange = readOnly ? .refuse : .useStored
            let store = try Self.open(directory.path, configuration)
            #expect(store.configuration.search == Self.custom().search.canonical)
            #expect(try Self.ids(store, "milk") == ["t1"])
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            store.close()
        }
    }

    @Test func aCorruptRecordIsAClearErrorThatAReindexRepairs() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(in: directory) { (store: Store) throws in
            try Self.overwriteRecord(store, with: [1, 9, 9, 9])
        }
        for readOnly in [true, false] {
            var configuration = Self.custom()
            configuration.readOnly = readOnly
            let error = Self.code { _ = try Self.open(directory.path, configuration) }
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("configuration record") == true, "\(String(describing: error))")
        }
        let store = try Self.open(directory.path, Self.custom(.reindex))
        defer { store.close() }
        #expect(try Self.record(store)?.search == Self.custom().search.canonical)
        #expect(try Self.ids(store, "milk") == ["t1"])
    }

    @Test func anotherTokenizerVersionIsRebuiltOnTheNextWritableOpen() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(in: directory) { (store: Store) throws in
            var old = try #require(try Self.record(store))
            old.tokenizerVersion = Tokenizer.version - 1
            try Self.overwriteRecord(store, with: old.encoded())
        }
        let store = try Self.open(directory.path, Self.custom())
        defer { store.close() }
        #expect(try Self.record(store)?.tokenizerVersion == Tokenizer.version)
        #expect(try store.read { try Meta.rebuildIsNeeded($0.tx, store.schema.meta) } == false)
        #expect(try Self.ids(store, "milk") == ["t1"])
    }

    // MARK: Custom projections

    @Test func aProjectionAnOpenDoesNotRegisterIsMarkedStaleAndRestoredByItsOwner() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var app = Self.custom()
        app.projections = [NotesPerTag()]
        var expected: [String: Int64] = [:]
        try await Self.makeStore(in: directory, app) { (store: Store) throws in
            expected = try CustomProjectionTests.stored(store)
            #expect(!expected.isEmpty)
            #expect(
                try Self.record(store)?.projections == [
                    ProjectionRecord(name: "notes-per-tag", version: 1, databases: ["counts"])
                ])
        }
        do {
            // A tool: the store's own configuration, without the application's projection.
            var tool = Store.Configuration()
            tool.searchChange = .useStored
            let store = try Self.open(directory.path, tool)
            #expect(try store.read { try $0.unregisteredProjections() }.map(\.name) == ["notes-per-tag"])
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            #expect(report.skippedProjections.map(\.name) == ["notes-per-tag"])
            try await store.rebuildProjections()
            try await store.put("notes", id: "n2", fields: ["title": "More", "tags": ["work", "home"]])
            #expect(try Self.record(store)?.projections.first?.isStale == true)
            store.close()
        }
        let owner = NotesPerTag()
        app.projections = [owner]
        let store = try Self.open(directory.path, app)
        defer { store.close() }
        #expect(owner.calls.value > 0, "the owner's open rebuilt the projection")
        #expect(try CustomProjectionTests.stored(store) == (try owner.expected(store)))
        #expect(try CustomProjectionTests.stored(store)["home"] == 1)
        #expect(try Self.record(store)?.projections.first?.isStale == false)
        #expect(try store.verify().isConsistent)
    }

    @Test func aProjectionTheApplicationDropsLeavesTheRecordAndIsRebuiltWhenItComesBack() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var app = Self.custom()
        app.projections = [NotesPerTag()]
        try await Self.makeStore(in: directory, app)
        do {
            let store = try Self.open(directory.path, Self.custom())
            #expect(try Self.record(store)?.projections == [])
            try await store.put("notes", id: "n2", fields: ["title": "More", "tags": ["home"]])
            store.close()
        }
        let back = NotesPerTag()
        app.projections = [back]
        let store = try Self.open(directory.path, app)
        defer { store.close() }
        #expect(try CustomProjectionTests.stored(store) == (try back.expected(store)))
        #expect(try CustomProjectionTests.stored(store)["home"] == 1)
    }
}

extension Store.Configuration {
    /// The configuration with an index on `tasks.title` declared.
    fileprivate func withIndex() -> Store.Configuration {
        var configuration = self
        configuration.indexes.append(IndexDefinition("tasks", fields: ["title"]))
        return configuration
    }
}
