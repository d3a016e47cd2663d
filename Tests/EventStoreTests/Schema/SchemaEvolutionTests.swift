import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Schema evolution: a model goes through three versions while replicas on different versions
/// sync; upcasters read old events in the new shape, the log keeps what was written, and every
/// replica converges once it runs the newest version.
struct SchemaEvolutionTests {
    /// Version 1: a title and whether the note is done (version 0 had no `done`).
    struct NoteV1: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var title: String
        var done: Bool
        var priority: String
    }

    /// Version 3: `title` renamed to `name` (version 2), `priority` a number (version 3).
    struct NoteV3: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var name: String
        var done: Bool
        var priority: Int
    }

    /// The notes schema at `version` (1, 2 or 3), with defaults for every field so that items
    /// written by another version decode.
    static func schema(_ version: UInt16) -> CollectionSchema {
        var schema = CollectionSchema(
            "notes", version: version,
            defaults: version >= 3
                ? ["done": false, "priority": 1, "name": ""] : ["done": false, "priority": "normal", "title": ""])
        if version >= 2 { schema.upcast(from: 1, [.renameField("title", to: "name")]) }
        if version >= 3 { schema.upcast(from: 2, [.mapValues("priority", ["high": 2], otherwise: 1)]) }
        return schema
    }

    static func configuration(_ version: UInt16?) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        if let version { configuration.schemas = [schema(version)] }
        return configuration
    }

    /// Gives each store the events it lacks from the others (as sync does), until all hold the same.
    static func exchange(_ stores: [Store]) async throws {
        let logs = try stores.map { try allEvents(of: $0) }
        for store in stores {
            for log in logs {
                _ = try await store.ingest(
                    log.map {
                        var event = $0; event.seq = 0; return event
                    })
            }
        }
    }

    @Test func aFieldAddedWithADefaultDecodesOnItemsWrittenBefore() async throws {
        struct Old: Codable, Identifiable, Sendable { var id: String; var title: String }
        struct New: Codable, Identifiable, Sendable, Equatable { var id: String; var title: String; var done: Bool }
        let directory = TemporaryDirectory(prefix: "schema-default")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await withStore(at: path) { store in
            try await store.collection(Old.self, named: "notes").put(Old(id: "n1", title: "Groceries"))
        }
        try await withStore(at: path) { store in
            // Without a schema the new field is missing, and the error says so.
            #expect(throws: EventStoreError.self) { try store.collection(New.self, named: "notes").get("n1") }
        }
        var configuration = Store.Configuration()
        configuration.schemas = [CollectionSchema("notes", version: 1, defaults: ["done": false])]
        try await withStore(at: path, configuration: configuration) { store in
            let notes = store.collection(New.self, named: "notes")
            #expect(try notes.get("n1") == New(id: "n1", title: "Groceries", done: false))
            #expect(try notes.all().models == [New(id: "n1", title: "Groceries", done: false)])
            #expect(try notes.fetch(notes.query().allowingScan()).models.count == 1)
            // New writes are stamped with the schema's version; the old event keeps its own.
            let event = try await notes.put(New(id: "n2", title: "Call", done: true))
            #expect(event.schema == 1)
            #expect(try allEvents(of: store).map(\.schema) == [0, 1])
        }
    }

    @Test func threeVersionsWhileReplicasOnDifferentVersionsSyncThenConverge() async throws {
        let directory = TemporaryDirectory(prefix: "schema-versions")
        defer { directory.remove() }
        let paths = ["a", "b", "c"].map { directory.appending($0) }
        // Replica A runs version 1, C version 2, B version 3.
        var a = try Store.open(at: paths[0], configuration: SchemaEvolutionTests.configuration(1))
        var c = try Store.open(at: paths[2], configuration: SchemaEvolutionTests.configuration(2))
        let b = try Store.open(at: paths[1], configuration: SchemaEvolutionTests.configuration(3))
        defer { b.close() }
        try await a.put("notes", id: "n1", fields: ["title": "Groceries", "done": false, "priority": "high"])
        try await a.put("notes", id: "n2", fields: ["title": "Taxes", "done": false, "priority": "normal"])
        try await c.patch("notes", id: "n2", fields: ["name": "Taxes 2026"])
        try await b.put("notes", id: "n3", fields: ["name": "Dentist", "done": true, "priority": 2])
        try await b.patch("notes", id: "n1", fields: ["done": true])
        try await SchemaEvolutionTests.exchange([a, b, c])

        // B reads every event in version 3's shape: A's titles are names, its priorities numbers.
        let newest = b.collection(NoteV3.self, named: "notes")
        #expect(try newest.get("n1") == NoteV3(id: "n1", name: "Groceries", done: true, priority: 2))
        #expect(try newest.get("n2") == NoteV3(id: "n2", name: "Taxes 2026", done: false, priority: 1))
        #expect(try newest.get("n3") == NoteV3(id: "n3", name: "Dentist", done: true, priority: 2))
        // A, on version 1, cannot read events of versions 2 and 3: it keeps them in its log (and
        // syncs them on) but leaves them out of its items, which stay what version 1 reads.
        let oldest = a.collection(NoteV1.self, named: "notes")
        #expect(
            try oldest.all().models == [
                NoteV1(id: "n1", title: "Groceries", done: false, priority: "high"),
                NoteV1(id: "n2", title: "Taxes", done: false, priority: "normal"),
            ])
        #expect(try allEvents(of: a).count == 5)
        // Holding back is part of how the projections are derived: a rebuild agrees.
        #expect(try a.verify().isConsistent)
        #expect(try c.verify().isConsistent)
        // C, on version 2, reads A's events renamed, and holds back B's.
        #expect(try c.item("notes", "n2")?.fields == ["name": "Taxes 2026", "done": false, "priority": "normal"])
        #expect(try c.item("notes", "n3") == nil)
        // The logs hold the events as written, with the versions that wrote them.
        let logged = try allEvents(of: b).sorted { $0.id.description < $1.id.description }
        #expect(Set(logged.map(\.schema)) == [1, 2, 3])
        #expect(logged.contains { $0.fields["title"] == "Groceries" })

        // A and C upgrade to version 3: their projections are rebuilt through the upcasters.
        a.close()
        c.close()
        a = try Store.open(at: paths[0], configuration: SchemaEvolutionTests.configuration(3))
        c = try Store.open(at: paths[2], configuration: SchemaEvolutionTests.configuration(3))
        defer {
            a.close()
            c.close()
        }
        let items = try StoreSnapshot(b).items
        #expect(try StoreSnapshot(a).items == items)
        #expect(try StoreSnapshot(c).items == items)
        for store in [a, b, c] {
            #expect(try store.collection(NoteV3.self, named: "notes").all().models.count == 3)
            #expect(try store.verify().isConsistent)
        }
        // The replay shows the upcast event and the one the log holds.
        let steps = try b.replaySteps(collection: "notes", item: "n1")
        #expect(steps.count == 2)
        let put = try #require(steps.first { $0.event.operation == .put })
        #expect(put.event.fields["name"] == "Groceries" && put.event.fields["priority"] == 2 && put.event.schema == 1)
        #expect(put.original?.fields["title"] == "Groceries" && put.original?.fields["priority"] == "high")
        let patch = try #require(steps.first { $0.event.operation == .patch })
        #expect(patch.original == nil && patch.event.schema == 3)
    }

    @Test func anOlderVersionThanRecordedIsRefusedAndAnUndeclaredSchemaIsKept() async throws {
        let directory = TemporaryDirectory(prefix: "schema-older")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(3)) {
            (store: Store) async throws in
            try await store.put("notes", id: "n1", fields: ["name": "Groceries"])
        }
        do {
            _ = try Store.open(at: path, configuration: SchemaEvolutionTests.configuration(2))
            Issue.record("an application on version 2 opened a store of version 3")
        } catch let error as EventStoreError {
            #expect(error.code == .configurationMismatch && error.message.contains("knows version 3"), "\(error)")
        }
        // An open that declares no schema keeps the recorded one (its steps are recorded): the log
        // holds events of its versions, so the schema stays.
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(nil)) {
            (store: Store) async throws in
            #expect(store.configuration.schemaRegistry.version(of: "notes") == 3)
            #expect(try await store.put("notes", id: "n2", fields: ["name": "Call"]).schema == 3)
        }
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(3)) {
            (store: Store) async throws in
            #expect(
                try store.read { try $0.configurationRecord() }?.schemas == [
                    SchemaRecord(
                        collection: "notes", version: 3,
                        upcasters: [
                            1: .steps([.renameField("title", to: "name")]),
                            2: .steps([.mapValues("priority", ["high": 2], otherwise: 1)]),
                        ])
                ])
            #expect(try store.collection(NoteV3.self, named: "notes").get("n1")?.name == "Groceries")
        }
    }

    @Test func aToolRunsTheRecordedStepsAndRefusesWhatNeedsUpcastersInCode() async throws {
        let directory = TemporaryDirectory(prefix: "schema-tool")
        defer { directory.remove() }
        let old = try Store.open(at: directory.appending("old"), configuration: SchemaEvolutionTests.configuration(1))
        try await old.put("notes", id: "n1", fields: ["title": "Groceries", "priority": "high"])
        let oldEvents = try allEvents(of: old).map {
            var event = $0; event.seq = 0; return event
        }
        old.close()
        // A tool keeps the store's recorded configuration; it has no application code.
        var tool = Store.Configuration()
        tool.searchChange = .useStored

        // Declarative steps: the tool reads old events as the application does.
        let declarative = directory.appending("declarative")
        try await withStore(at: declarative, configuration: SchemaEvolutionTests.configuration(3)) {
            _ = try await $0.ingest(oldEvents)
        }
        let expected = try await snapshot(declarative, SchemaEvolutionTests.configuration(3))
        try await withStore(at: declarative, configuration: tool) { store in
            #expect(store.configuration.schemaRegistry.collectionsMissingUpcasters.isEmpty)
            try await store.rebuildProjections()
            #expect(try StoreSnapshot(store).items == expected)
            #expect(try store.verify().isConsistent)
            #expect(
                try store.replaySteps(collection: "notes", item: "n1").first?.original?.fields["title"] == "Groceries")
            // Appending stamps the recorded version.
            #expect(try await store.patch("notes", id: "n1", fields: ["done": true]).schema == 3)
        }

        // Upcasters in code: the tool refuses what needs them, and the store stays as it was.
        var coded = CollectionSchema("notes", version: 2)
        coded.upcast(from: 1) { $0.renameField("title", to: "name") }
        var application = Store.Configuration()
        application.schemas = [coded]
        let custom = directory.appending("custom")
        try await withStore(at: custom, configuration: application) { store in
            _ = try await store.ingest(oldEvents)
        }
        let before = try await snapshot(custom, application)
        try await withStore(at: custom, configuration: tool) { store in
            #expect(store.configuration.schemaRegistry.collectionsMissingUpcasters == ["notes"])
            do {
                try await store.rebuildProjections()
                Issue.record("a rebuild without the upcasters ran")
            } catch let error as EventStoreError {
                #expect(error.code == .configurationMismatch && error.message.contains("only the"), "\(error)")
            }
            #expect(throws: EventStoreError.self) { try store.verify() }
            // The refused rebuild left the projections as they were.
            #expect(try StoreSnapshot(store).items == before)
            #expect(try await store.patch("notes", id: "n1", fields: ["done": true]).schema == 2)
        }
        try await withStore(at: custom, configuration: application) { (store: Store) async throws in
            #expect(try store.item("notes", "n1")?.fields == ["name": "Groceries", "priority": "high", "done": true])
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func aToolRunsTheRecordedStepsAboveTheLastUpcasterInCode() throws {
        let record = SchemaRecord(
            collection: "notes", version: 3, upcasters: [1: .custom, 2: .steps([.renameField("title", to: "name")])])
        let registry = SchemaRegistry(schemas: [], recorded: [record])
        func event(at version: UInt16) -> Event {
            Event(
                seq: 1, id: EventID(origin: ReplicaID(high: 1, low: 1), sequence: 1), hlc: HLCTimestamp(rawValue: 1),
                base: .zero, collection: "notes", item: "n1", operation: .put, fields: ["title": "x"], schema: version)
        }
        #expect(try registry.interpret(event(at: 2))?.fields == ["name": "x"])
        #expect(throws: EventStoreError.self) { try registry.interpret(event(at: 1)) }
        #expect(try registry.interpret(event(at: 3))?.fields == ["title": "x"])
        #expect(try registry.interpret(event(at: 4)) == nil)
        #expect(registry.version(of: "notes") == 3 && registry.collectionsMissingUpcasters == ["notes"])
    }

    @Test func upcastStepsRewriteEventsAsDeclared() {
        func upcast(_ operation: EventOperation, _ fields: [String: Value], _ steps: [UpcastStep]) -> UpcastEvent {
            var event = UpcastEvent(
                Event(
                    seq: 1, id: EventID(origin: ReplicaID(high: 1, low: 1), sequence: 1),
                    hlc: HLCTimestamp(rawValue: 1),
                    base: .zero, collection: "people", item: "p1", operation: operation, fields: fields),
                version: 0)
            for step in steps { step.apply(to: &event) }
            return event
        }
        let split = upcast(
            .put, ["name": "Ada Lovelace King", "age": "36"],
            [.splitField("name", separator: " ", into: ["first", "last"])])
        #expect(split.fields == ["first": "Ada", "last": "Lovelace King", "age": "36"])
        let short = upcast(.patch, ["name": "Ada"], [.splitField("name", separator: " ", into: ["first", "last"])])
        #expect(short.fields == ["first": "Ada", "last": ""])
        #expect(upcast(.put, [:], [.setDefault("done", false)]).fields == ["done": false])
        #expect(upcast(.patch, ["title": "x"], [.setDefault("done", false)]).fields == ["title": "x"])
        let mapped = upcast(
            .put, ["p": "high", "q": "odd"], [.mapValues("p", ["high": 2]), .mapValues("q", ["high": 2], otherwise: 1)])
        #expect(mapped.fields == ["p": 2, "q": 1])
        #expect(upcast(.put, ["p": "low"], [.mapValues("p", ["high": 2])]).fields == ["p": "low"])
        #expect(upcast(.put, ["a": 1, "b": 2], [.removeField("a"), .renameField("b", to: "c")]).fields == ["c": 2])
        let moved = upcast(.delete, [:], [.moveToCollection("archive"), .renameField("x", to: "y")])
        #expect(moved.collection == "archive" && moved.fields.isEmpty)
    }

    /// The items of the store at `path`, opened with `configuration`.
    private func snapshot(_ path: String, _ configuration: Store.Configuration) async throws -> [String] {
        var items: [String] = []
        try await withStore(at: path, configuration: configuration) { items = try StoreSnapshot($0).items }
        return items
    }

    @Test func aRaisedVersionRebuildsInTheBackgroundWhileReadersSeeOneShape() async throws {
        let directory = TemporaryDirectory(prefix: "schema-background")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(1)) { store in
            try await store.append(
                (0..<3_000).map { .put("notes", id: "n\($0)", fields: ["title": .string("note \($0)")]) })
        }
        let seen = Mutex<[Store.Progress]>([])
        var configuration = SchemaEvolutionTests.configuration(3)
        configuration.rebuildsInBackground = true
        configuration.rebuildProgress = { progress in seen.withLock { $0.append(progress) } }
        try await withStore(at: path, configuration: configuration) { (store: Store) async throws in
            // A reader sees the items in one shape, old or new, never a mix.
            let shapes = try store.read { reader in
                Set(try reader.items(in: "notes", limit: 5_000).items.map { $0.fields["name"] != nil })
            }
            #expect(shapes.count == 1, "a snapshot mixed old and new items")
            // A write waits for the rebuild, then lands on the new projections.
            try await store.put("notes", id: "late", fields: ["name": "written during the rebuild"])
            #expect(!store.isRebuilding)
            try await store.rebuildFinished()
            let items = try store.read { try $0.items(in: "notes", limit: 5_000).items }
            #expect(items.count == 3_001 && items.allSatisfy { $0.fields["name"] != nil && $0.fields["title"] == nil })
            #expect(try store.verify().isConsistent)
        }
        let progress = seen.withLock { $0 }
        #expect(progress.last.map { $0.processed == $0.total && $0.total == 3_000 } == true, "\(progress)")
    }

    @Test func aBackgroundRebuildThatFailsSaysWhyAndLeavesTheOldProjections() async throws {
        let directory = TemporaryDirectory(prefix: "schema-background-fails")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(1)) { store in
            try await store.put("notes", id: "n1", fields: ["title": "Groceries"])
        }
        var broken = CollectionSchema("notes", version: 2)
        broken.upcast(from: 1) { $0.item = "" }
        var configuration = Store.Configuration()
        configuration.schemas = [broken]
        configuration.rebuildsInBackground = true
        try await withStore(at: path, configuration: configuration) { (store: Store) async throws in
            await #expect(throws: EventStoreError.self) { try await store.rebuildFinished() }
            #expect(try store.item("notes", "n1")?.fields == ["title": "Groceries"])
        }
    }

    @Test(.timeLimit(.minutes(1))) func changeStreamsAndLiveQueriesFollowItemsThatAnUpcasterMoves() async throws {
        // Version 1 kept finished tasks in "tasks" with done == true; version 2 moves them to "archive".
        var tasks = CollectionSchema("tasks", version: 2)
        tasks.upcast(from: 1, [.moveToCollection("archive")])
        var configuration = Store.Configuration()
        configuration.schemas = [tasks]
        var old = Store.Configuration()
        old.schemas = [CollectionSchema("tasks", version: 1)]
        let directory = TemporaryDirectory(prefix: "schema-move")
        defer { directory.remove() }
        let writer = try Store.open(at: directory.appending("old"), configuration: old)
        try await writer.append([.put("tasks", id: "t1", fields: ["title": "Filed"], schema: 1)])
        let events = try allEvents(of: writer).map {
            var event = $0; event.seq = 0; return event
        }
        writer.close()
        try await withTemporaryStore(configuration: configuration) { store in
            let archive = Query("archive").allowingScan()
            var answers = store.observe(archive).makeAsyncIterator()
            #expect(try await answers.next()?.items.isEmpty == true)
            _ = try await store.ingest(events)
            #expect(try await answers.next()?.items.map(\.id) == ["t1"])
            var changes = store.changes(after: 0, in: "archive").makeAsyncIterator()
            let change = try await changes.next()
            #expect(change?.collection == "archive" && change?.id == "t1" && change?.item?.fields == ["title": "Filed"])
            #expect(try store.item("tasks", "t1") == nil)
        }
    }

    @Test func anUpcasterThatMakesAnInvalidEventFailsTheWriteWithItsReason() async throws {
        var schema = CollectionSchema("notes", version: 2)
        schema.upcast(from: 1) { $0.collection = "not a name" }
        var configuration = Store.Configuration()
        configuration.schemas = [schema]
        try await withTemporaryStore(configuration: configuration) { store in
            do {
                // A change that names an older version is upcast, and this upcaster breaks it.
                try await store.append([.put("notes", id: "n1", fields: ["title": "x"], schema: 1)])
                Issue.record("the write was accepted")
            } catch let error as EventStoreError {
                #expect(error.code == .invalidEvent && error.message.contains("upcasters of notes"), "\(error)")
            }
            #expect(try store.head() == 0)
        }
    }

    @Test func declaredSchemasAreChecked() async throws {
        var twice = Store.Configuration()
        twice.schemas = [CollectionSchema("notes", version: 1), CollectionSchema("notes", version: 2)]
        var beyond = CollectionSchema("notes", version: 1)
        beyond.upcast(from: 1) { _ in }
        var late = Store.Configuration()
        late.schemas = [beyond]
        // Steps that would write names no event may carry.
        var badNames: [Store.Configuration] = []
        for step: UpcastStep in [
            .renameField("title", to: ""), .splitField("title", separator: " ", into: ["a", "b\u{0}"]),
            .moveToCollection(""),
        ] {
            var schema = CollectionSchema("notes", version: 2)
            schema.upcast(from: 1, [step])
            var configuration = Store.Configuration()
            configuration.schemas = [schema]
            badNames.append(configuration)
        }
        for configuration in [twice, late] + badNames {
            await #expect(throws: EventStoreError.self) {
                try await withTemporaryStore(configuration: configuration) { (_: Store) async throws in }
            }
        }
    }

    @Test func aPatchWhoseEveryFieldAStepRemovedChangesNothingAndTheStoreStillOpens() async throws {
        let directory = TemporaryDirectory(prefix: "schema-removed")
        defer { directory.remove() }
        let path = directory.appending("store")
        var first = Store.Configuration()
        first.schemas = [CollectionSchema("notes", version: 1)]
        let written = try await { () async throws -> [Event] in
            let store = try Store.open(at: path, configuration: first)
            defer { store.close() }
            try await store.put("notes", id: "n1", fields: ["title": "Groceries"])
            return [try await store.patch("notes", id: "n1", fields: ["draft": true])]
        }()
        var second = CollectionSchema("notes", version: 2)
        second.upcast(from: 1, [.removeField("draft")])
        var configuration = Store.Configuration()
        configuration.schemas = [second]
        // The raised version rebuilds from the log: the emptied patch is kept and changes nothing.
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        #expect(try store.item("notes", "n1")?.fields == ["title": "Groceries"])
        #expect(try store.head() == 2 && store.read { try $0.event(id: written[0].id) } != nil)
        #expect(try store.verify().isConsistent)
        // Received from a replica still on version 1, the same.
        var received = written[0]
        received.id = EventID(origin: ReplicaID(high: 4, low: 4), sequence: 1)
        received.seq = 0
        #expect(try await store.ingest([received]).appended.count == 1)
        #expect(try store.item("notes", "n1")?.fields == ["title": "Groceries"])
        // A change written at version 1 that only names the removed field says so.
        await #expect(throws: EventStoreError.self) {
            try await store.append([.patch("notes", id: "n1", fields: ["draft": false], schema: 1)])
        }
    }

    @Test func aReplicaWithoutASchemaHoldsBackEventsOfTheFirstDeclaredOne() async throws {
        var schema = CollectionSchema("notes", version: 1)
        schema.upcast(from: 0, [.renameField("title", to: "name")])
        var newer = Store.Configuration()
        newer.schemas = [schema]
        try await withTemporaryStore { older in
            try await withTemporaryStore(configuration: newer) { newer in
                try await older.put("notes", id: "n1", fields: ["title": "Groceries"])
                let renamed = try await newer.put("notes", id: "n1", fields: ["name": "Groceries, renamed"])
                try await SchemaEvolutionTests.exchange([older, newer])
                // The older replica keeps and passes on the version-1 event, but its items stay in
                // the shape it knows; the newer one reads the older event through its upcaster.
                #expect(try older.read { try $0.event(id: renamed.id) } != nil)
                #expect(try older.item("notes", "n1")?.fields == ["title": "Groceries"])
                #expect(try newer.item("notes", "n1")?.fields == ["name": "Groceries, renamed"])
            }
        }
    }

    /// Opens the store at `path` with `configuration` for `body`, then closes it.
    func withStore(
        at path: String, configuration: Store.Configuration = Store.Configuration(),
        _ body: (Store) async throws -> Void
    ) async throws {
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        try await body(store)
    }
}
