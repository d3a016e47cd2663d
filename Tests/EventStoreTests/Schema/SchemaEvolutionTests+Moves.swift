import EventStoreTestSupport
import Testing

@testable import EventStore

/// Upcasters that move items to another collection: a move names the version of the target's
/// schema its events enter at, and they are read through the target's upcasters from there.
extension SchemaEvolutionTests {
    /// The events of one `tasks` put at version 1, as a release of that version wrote them.
    static func versionOneTask(_ id: String, fields: [String: Value]) async throws -> [Event] {
        var old = Store.Configuration()
        old.schemas = [CollectionSchema("tasks", version: 1)]
        var events: [Event] = []
        try await withTemporaryStore(configuration: old) { (store: Store) async throws in
            try await store.append([.put("tasks", id: id, fields: fields)])
            events = try allEvents(of: store).map {
                var event = $0; event.seq = 0; return event
            }
        }
        return events
    }

    @Test func aMovedEventIsReadThroughTheTargetsUpcastersFromTheVersionItEntersAt() async throws {
        // tasks 1 → 2 moves to archive at its version 1 (which wrote "title"); archive 1 → 2
        // renames title to name; tasks 2 → 3 renames title to label, for tasks that stayed.
        var tasks = CollectionSchema("tasks", version: 3)
        tasks.upcast(from: 1, [.moveToCollection("archive", atVersion: 1), .setDefault("done", true)])
        tasks.upcast(from: 2, [.renameField("title", to: "label")])
        var archive = CollectionSchema("archive", version: 2)
        archive.upcast(from: 1, [.renameField("title", to: "name")])
        var configuration = Store.Configuration()
        configuration.schemas = [tasks, archive]
        let events = try await Self.versionOneTask("t1", fields: ["title": "Filed"])
        let directory = TemporaryDirectory(prefix: "schema-move-at")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await withStore(at: path, configuration: configuration) { (store: Store) async throws in
            _ = try await store.ingest(events)
            // The rest of the moving upcaster applied (done), the target's upcaster too (name);
            // the moving collection's later one did not (no label).
            #expect(try store.item("archive", "t1")?.fields == ["name": "Filed", "done": true])
            #expect(try store.item("tasks", "t1") == nil)
            // A rebuild, and a tool with the recorded steps, read it the same way.
            try await store.rebuildProjections()
            #expect(try store.item("archive", "t1")?.fields == ["name": "Filed", "done": true])
        }
        var tool = Store.Configuration()
        tool.readOnly = true
        let reader = try Store.open(at: path, configuration: tool)
        defer { reader.close() }
        #expect(try reader.read { try $0.configurationRecord() }?.schemas.contains(where: \.hasVersionedMoves) == true)
        let registry = reader.configuration.schemaRegistry
        let interpreted = try events.first.flatMap { try registry.interpret($0) }
        #expect(interpreted?.collection == "archive" && interpreted?.fields == ["name": "Filed", "done": true])
    }

    @Test func anUpcasterInCodeMovesAtAVersionAndACycleIsAnError() async throws {
        var tasks = CollectionSchema("tasks", version: 2)
        tasks.upcast(from: 1) { event in event.move(to: "archive", atVersion: 1) }
        var archive = CollectionSchema("archive", version: 2)
        archive.upcast(from: 1, [.renameField("title", to: "name")])
        let events = try await Self.versionOneTask("t1", fields: ["title": "Filed"])
        let registry = SchemaRegistry(schemas: [tasks, archive], recorded: [])
        #expect(try registry.interpret(events[0])?.fields == ["name": "Filed"])

        // Two collections that move each other's events back and forth, in code, which only
        // running it shows (steps that would do so are refused when declared, below).
        var ping = CollectionSchema("tasks", version: 2)
        ping.upcast(from: 1) { event in event.move(to: "archive", atVersion: 1) }
        var pong = CollectionSchema("archive", version: 2)
        pong.upcast(from: 1) { event in event.move(to: "tasks", atVersion: 1) }
        let cycle = SchemaRegistry(schemas: [ping, pong], recorded: [])
        #expect {
            _ = try cycle.interpret(events[0])
        } throws: { error in
            (error as? EventStoreError)?.code == .invalidEvent
                && (error as? EventStoreError)?.message.contains("cycle") == true
        }
    }

    @Test func movesThatWouldSkipOrNeverReachTheTargetsUpcastersAreRefused() async throws {
        var archive = CollectionSchema("archive", version: 2)
        archive.upcast(from: 1, [.renameField("title", to: "name")])
        // Without a version into a collection with upcasters: the moved events would skip them.
        var unversioned = CollectionSchema("tasks", version: 2)
        unversioned.upcast(from: 1, [.moveToCollection("archive")])
        // At a version the target does not have: its events would never be read.
        var tooHigh = CollectionSchema("tasks", version: 2)
        tooHigh.upcast(from: 1, [.moveToCollection("archive", atVersion: 3)])
        var undeclared = CollectionSchema("tasks", version: 2)
        undeclared.upcast(from: 1, [.moveToCollection("elsewhere", atVersion: 1)])
        for (schemas, words) in [
            ([unversioned, archive], "without a version"), ([tooHigh, archive], "above archive's version 2"),
            ([undeclared, archive], "above elsewhere's version 0"),
        ] as [([CollectionSchema], String)] {
            var configuration = Store.Configuration()
            configuration.schemas = schemas
            await #expect {
                try await withTemporaryStore(configuration: configuration) { (_: Store) async throws in }
            } throws: { error in
                (error as? EventStoreError)?.code == .configurationMismatch
                    && (error as? EventStoreError)?.message.contains(words) == true
            }
        }
        // Steps that move events back and forth.
        var ping = CollectionSchema("tasks", version: 2)
        ping.upcast(from: 1, [.moveToCollection("archive", atVersion: 1)])
        var pong = CollectionSchema("archive", version: 2)
        pong.upcast(from: 1, [.moveToCollection("tasks", atVersion: 1)])
        var cycle = Store.Configuration()
        cycle.schemas = [ping, pong]
        await #expect {
            try await withTemporaryStore(configuration: cycle) { (_: Store) async throws in }
        } throws: { error in
            (error as? EventStoreError)?.code == .configurationMismatch
                && (error as? EventStoreError)?.message.contains("in a cycle") == true
        }
        // Without a version into a collection without upcasters: as before.
        var configuration = Store.Configuration()
        configuration.schemas = [unversioned, CollectionSchema("archive", version: 1)]
        try await withTemporaryStore(configuration: configuration) { (_: Store) async throws in }
    }

    @Test func movesAreCheckedAgainstRecordedSchemasAndToolsFollowThem() async throws {
        var tasks = CollectionSchema("tasks", version: 2)
        tasks.upcast(from: 1, [.moveToCollection("archive", atVersion: 1)])
        var archive = CollectionSchema("archive", version: 2)
        archive.upcast(from: 1, [.renameField("title", to: "name")])
        let events = try await Self.versionOneTask("t1", fields: ["title": "Filed"])
        let directory = TemporaryDirectory(prefix: "schema-move-recorded")
        defer { directory.remove() }
        let path = directory.appending("store")
        var both = Store.Configuration()
        both.schemas = [tasks, archive]
        try await withStore(at: path, configuration: both) { (store: Store) async throws in
            _ = try await store.ingest(events)
        }
        // archive's schema stays recorded: a later open that declares only tasks is not
        // refused, and reads the moved item through archive's recorded steps.
        var tasksOnly = Store.Configuration()
        tasksOnly.schemas = [tasks]
        try await withStore(at: path, configuration: tasksOnly) { (store: Store) async throws in
            try await store.rebuildProjections()
            #expect(try store.item("archive", "t1")?.fields == ["name": "Filed"])
        }
        // An event that moves away before an upcaster in code is read by a tool, which lacks
        // the code; one that reaches the code is refused.
        let recorded = SchemaRecord(
            collection: "tasks", version: 3,
            upcasters: [1: .steps([.moveToCollection("archive", atVersion: 1)]), 2: .custom])
        let tool = SchemaRegistry(schemas: [], recorded: [recorded, SchemaRecord(archive)])
        #expect(try tool.interpret(events[0])?.fields == ["name": "Filed"])
        var atTwo = events[0]
        atTwo.schema = 2
        #expect(throws: EventStoreError.self) { _ = try tool.interpret(atTwo) }
    }

    @Test func anotherOpenInTheProcessIsHeldToTheSchemasItDeclares() async throws {
        let directory = TemporaryDirectory(prefix: "schema-in-process")
        defer { directory.remove() }
        let path = directory.appending("store")
        let store = try Store.open(at: path, configuration: SchemaEvolutionTests.configuration(3))
        defer { store.close() }
        var useStored = SchemaEvolutionTests.configuration(2)
        useStored.searchChange = .useStored
        var readOnly = SchemaEvolutionTests.configuration(1)
        readOnly.readOnly = true
        for configuration in [useStored, readOnly] {
            #expect {
                _ = try Store.open(at: path, configuration: configuration)
            } throws: { error in
                (error as? EventStoreError)?.code == .configurationMismatch
            }
        }
        // One that declares none (a tool) takes the instance as it is.
        var tool = Store.Configuration()
        tool.searchChange = .useStored
        #expect(try Store.open(at: path, configuration: tool) === store)
    }
}
