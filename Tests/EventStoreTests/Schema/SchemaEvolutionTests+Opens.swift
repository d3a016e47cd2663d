import EventStoreTestSupport
import Testing

@testable import EventStore

/// Which schemas an open reads the log with: the declared ones hold whatever
/// ``Store/Configuration/searchChange`` says, a read-only open cannot change them, and a change
/// may name any version, 0 included.
extension SchemaEvolutionTests {
    @Test func anOpenThatUsesTheStoredSearchIsStillHeldToItsDeclaredSchemas() async throws {
        let directory = TemporaryDirectory(prefix: "schema-use-stored")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await writeVersionOneNote(at: path)
        // A raised version rebuilds, as without .useStored: the item is read through the upcasters.
        var raised = SchemaEvolutionTests.configuration(3)
        raised.searchChange = .useStored
        try await withStore(at: path, configuration: raised) { (store: Store) async throws in
            let note = try store.collection(NoteV3.self, named: "notes").get("n1")
            #expect(note?.name == "Groceries" && note?.priority == 2, "\(String(describing: note))")
            #expect(try store.read { try $0.configurationRecord() }?.schemas.map(\.version) == [3])
            #expect(try await store.put("notes", id: "n2", fields: ["name": "Call"]).schema == 3)
        }
        // An older version is refused, as without .useStored.
        var older = SchemaEvolutionTests.configuration(2)
        older.searchChange = .useStored
        #expect {
            _ = try Store.open(at: path, configuration: older)
        } throws: { error in
            (error as? EventStoreError)?.code == .configurationMismatch
                && (error as? EventStoreError)?.message.contains("knows version 3") == true
        }
        // A tool (no schemas declared) keeps the recorded ones.
        var tool = Store.Configuration()
        tool.searchChange = .useStored
        try await withStore(at: path, configuration: tool) { (store: Store) async throws in
            #expect(store.configuration.schemaRegistry.version(of: "notes") == 3)
            #expect(try store.item("notes", "n1")?.fields["name"] == "Groceries")
        }
    }

    @Test func aReadOnlyOpenThatDeclaresOtherSchemasIsRefused() async throws {
        let directory = TemporaryDirectory(prefix: "schema-read-only")
        defer { directory.remove() }
        let path = directory.appending("store")
        try await writeVersionOneNote(at: path)
        func readOnly(_ version: UInt16?) -> Store.Configuration {
            var configuration = SchemaEvolutionTests.configuration(version)
            configuration.readOnly = true
            return configuration
        }
        // Its projections hold version 1's items: read with version 3's schema, they would not
        // decode, and only a writable open rebuilds them.
        #expect {
            _ = try Store.open(at: path, configuration: readOnly(3))
        } throws: { error in
            (error as? EventStoreError)?.code == .configurationMismatch
                && (error as? EventStoreError)?.message.contains("open it for writing once") == true
        }
        // The recorded version, or none (a tool), opens.
        for version in [1, nil] as [UInt16?] {
            let store = try Store.open(at: path, configuration: readOnly(version))
            #expect(try store.item("notes", "n1")?.fields["priority"] == "high")
            store.close()
        }
        // After a writable open at version 3, a read-only one at version 3 reads the new shape.
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(3)) { (_: Store) async in }
        let store = try Store.open(at: path, configuration: readOnly(3))
        defer { store.close() }
        #expect(try store.collection(NoteV3.self, named: "notes").get("n1")?.priority == 2)
    }

    @Test func aChangeThatNamesVersionZeroIsReadThroughItsUpcasters() async throws {
        let directory = TemporaryDirectory(prefix: "schema-version-zero")
        defer { directory.remove() }
        var notes = CollectionSchema("notes", version: 1)
        notes.upcast(from: 0, [.renameField("title", to: "name")])
        var configuration = Store.Configuration()
        configuration.durability = .relaxed
        configuration.schemas = [notes]
        try await withStore(at: directory.appending("store"), configuration: configuration) {
            (store: Store) async throws in
            // An importer of the exports of the release before the schema: its fields are
            // version 0's, and the store reads them so.
            let imported = try await store.append([.put("notes", id: "n1", fields: ["title": "Groceries"], schema: 0)])
            #expect(imported.map(\.schema) == [0])
            #expect(try store.item("notes", "n1")?.fields == ["name": "Groceries"])
            // Without a version, a change is the current one's.
            let current = try await store.append([.put("notes", id: "n2", fields: ["name": "Call"])])
            #expect(current.map(\.schema) == [1])
            #expect(try store.item("notes", "n2")?.fields == ["name": "Call"])
        }
    }

    /// Makes a store at `path` on notes version 1 with one note, n1.
    func writeVersionOneNote(at path: String) async throws {
        try await withStore(at: path, configuration: SchemaEvolutionTests.configuration(1)) {
            (store: Store) async throws in
            try await store.put("notes", id: "n1", fields: ["title": "Groceries", "priority": "high"])
        }
    }
}
