import EventStoreTestSupport
import Testing

@testable import EventStore

/// The engine's own description of its `meta` and `state` entries, which tools show.
struct StoredEntryTests {
    @Test func everyEngineEntryOfAStoreDecodes() async throws {
        var configuration = ProjectionFixtures.configuration()
        configuration.projections = [CustomProjectionTests.NotesPerTag()]
        try await withTemporaryStore(configuration: configuration) { store async throws in
            try await store.put("notes", id: "n1", fields: ["title": "Sync", "tags": ["work"]])
            try await store.put("notes", id: "n2", fields: ["title": "Plan"])
            try await store.put("notes", id: "n2", fields: ["title": "Plan again"])
            let (meta, state) = try store.read { reader in (try reader.allMetadata(), try reader.projectionState()) }
            var decoded: [String: StoredEntry] = [:]
            for (key, value) in meta where key.hasPrefix(StoredEntry.metaPrefix) {
                let entry: StoredEntry? = try StoredEntry(metaKey: key, value: value)
                let required: StoredEntry = try #require(entry, "\(key)")
                decoded[key] = required
            }
            for (key, value) in state {
                let entry: StoredEntry? = try StoredEntry(stateKey: key, value: value)
                let required: StoredEntry = try #require(entry, "\(key)")
                decoded[key] = required
            }
            #expect(decoded["store.replica"] == .replicaID(store.replicaID))
            #expect(decoded["store.format"] == .formatVersion(Meta.currentFormat))
            #expect(decoded["store.generation"] == .generation(0))
            #expect(decoded["store.origin-seq"] == .originSequence(3))
            #expect(decoded["store.configuration"] == .configuration(ConfigurationRecord(configuration: configuration)))
            #expect(decoded["applied-through"] == .appliedThrough(3))
            // n2's first version (doc id 2) died when it was replaced.
            #expect(decoded["search.dead.00000000"] == .deadDocuments(documents: 0...8_191, dead: 1))
            if case .searchTotals("notes", let documents, let totalLength) = decoded["search.stats.notes"] {
                #expect(documents == 2 && totalLength > 0)
            } else {
                Issue.record("search.stats.notes: \(String(describing: decoded["search.stats.notes"]))")
            }
            #expect(decoded["count.notes"] == .itemCount(collection: "notes", count: 2))
            #expect(
                decoded["projection-version.notes-per-tag"] == .projectionVersion(name: "notes-per-tag", version: 1))
            if case .searchIndex(let index) = decoded["search.index"] {
                #expect(index.nextDocument == 4 && index.segments >= 1 && index.postings > 0, "\(index.text)")
            } else {
                Issue.record("search.index")
            }
        }
    }

    @Test func otherKeysAreNotTheEngines() throws {
        #expect(try StoredEntry(metaKey: "sync.epoch", value: [1]) == nil)
        #expect(try StoredEntry(metaKey: "app.theme", value: []) == nil)
        #expect(try StoredEntry(stateKey: "something", value: []) == nil)
    }

    @Test func badBytesAreCorrupt() {
        let cases: [(String, [UInt8])] = [
            ("store.hlc", [1, 2, 3]), ("store.replica", [UInt8](repeating: 0, count: 15)), ("store.configuration", [1]),
        ]
        for (key, value) in cases {
            #expect(throws: EventStoreError.self) { _ = try StoredEntry(metaKey: key, value: value) }
        }
        #expect(throws: EventStoreError.self) { _ = try StoredEntry(stateKey: "count.notes", value: [1]) }
        #expect(throws: EventStoreError.self) { _ = try StoredEntry(stateKey: "applied-through", value: []) }
    }
}
