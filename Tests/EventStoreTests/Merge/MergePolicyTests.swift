import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Add-wins sets and counters through real stores: declared in a collection's schema, written
/// as whole values, typed models or edits, merged across replicas, recorded in the store,
/// rebuilt, verified and explained.
struct MergePolicyTests {
    typealias F = ProjectionFixtures

    static func schema() -> CollectionSchema {
        var notes = CollectionSchema("notes", version: 1)
        notes.merge("tags", as: .addWinsSet)
        notes.merge("views", as: .counter)
        return notes
    }

    static func configuration(_ clock: ManualClock, schemas: [CollectionSchema] = [schema()]) -> Store.Configuration {
        var configuration = F.configuration(clock: clock)
        configuration.schemas = schemas
        return configuration
    }

    /// Two replicas with their own clocks, in a temporary directory.
    static func withReplicas(
        schemas: [CollectionSchema] = [schema()], _ body: (Store, Store, TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let phone = try Store.open(
            at: directory.appending("phone"),
            configuration: configuration(ManualClock(start: F.epoch), schemas: schemas))
        let laptop = try Store.open(
            at: directory.appending("laptop"),
            configuration: configuration(ManualClock(start: F.epoch + 7), schemas: schemas))
        defer {
            phone.close()
            laptop.close()
        }
        try await body(phone, laptop, directory)
    }

    /// Each store receives every event the other holds.
    static func exchange(_ first: Store, _ second: Store) async throws {
        let toSecond = try allEvents(of: first)
        let toFirst = try allEvents(of: second)
        _ = try await second.ingest(toSecond)
        _ = try await first.ingest(toFirst)
    }

    struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var title: String
        var tags: [String]
        var views: Int
    }

    // MARK: Merging

    @Test func typedModelsOnTwoOfflineReplicasKeepBothTagAdditions() async throws {
        try await Self.withReplicas { phone, laptop, _ in
            let onPhone = phone.collection(Note.self, named: "notes")
            try await onPhone.put(Note(id: "n1", title: "Plan", tags: ["work"], views: 0))
            try await Self.exchange(phone, laptop)
            // Offline, each device adds a tag by saving the whole model.
            try await onPhone.put(Note(id: "n1", title: "Plan", tags: ["work", "urgent"], views: 0))
            let onLaptop = laptop.collection(Note.self, named: "notes")
            try await onLaptop.put(Note(id: "n1", title: "Plan", tags: ["work", "home"], views: 0))
            try await Self.exchange(phone, laptop)
            let merged = try #require(try onPhone.get("n1"))
            #expect(Set(merged.tags) == ["work", "urgent", "home"], "no addition is lost")
            #expect(try onLaptop.get("n1") == merged)
            #expect(try StoreSnapshot(phone) == StoreSnapshot(laptop))
            #expect(try phone.verify().isConsistent && laptop.verify().isConsistent)
        }
    }

    @Test func aRemovalTakesWhatItsWriterSawAndAConcurrentAdditionStays() async throws {
        try await Self.withReplicas { phone, laptop, _ in
            try await phone.append([.put("notes", id: "n1", fields: ["title": "t", "tags": ["work"]])])
            try await Self.exchange(phone, laptop)
            // Both devices tag the note "draft" offline; the laptop then takes its tag off again.
            try await laptop.append([.edit("notes", id: "n1", ["tags": .add(["draft"])])])
            try await phone.append([.edit("notes", id: "n1", ["tags": .add(["draft"])])])
            try await laptop.append([.edit("notes", id: "n1", ["tags": .remove(["draft"])])])
            // Adding what the set holds changes nothing.
            try await phone.append([.edit("notes", id: "n1", ["tags": .add(["draft", "work"])])])
            try await Self.exchange(phone, laptop)
            #expect(try phone.item("notes", "n1")?.fields["tags"] == ["work", "draft"], "the phone's tag was not seen")
            #expect(try laptop.item("notes", "n1")?.fields["tags"] == ["work", "draft"])
            // The removal that a concurrent addition outlived is a conflict, with both sides.
            let conflicts = try phone.read { try $0.conflicts(collection: "notes", item: "n1") }
            #expect(conflicts.contains { $0.field == "tags" && $0.loser.value == nil && $0.winner.value == "draft" })
            // A removal that saw every addition wins.
            try await laptop.append([.edit("notes", id: "n1", ["tags": .remove(["draft"])])])
            try await Self.exchange(phone, laptop)
            #expect(try phone.item("notes", "n1")?.fields["tags"] == ["work"])
            #expect(try StoreSnapshot(phone) == StoreSnapshot(laptop))
        }
    }

    @Test func concurrentIncrementsAddUpAndAWholeNumberIsADifference() async throws {
        try await Self.withReplicas { phone, laptop, _ in
            try await phone.append([.put("notes", id: "n1", fields: ["title": "t", "views": 5])])
            try await Self.exchange(phone, laptop)
            try await phone.append([.increment("notes", id: "n1", field: "views", by: 2)])
            try await laptop.append([.increment("notes", id: "n1", field: "views", by: 3)])
            // A typed model saving the number it shows (5 → 6) adds one, not "set to 6".
            try await laptop.collection(Note.self, named: "notes").put(Note(id: "n1", title: "t", tags: [], views: 9))
            try await Self.exchange(phone, laptop)
            #expect(try phone.item("notes", "n1")?.fields["views"] == 11)
            #expect(try laptop.item("notes", "n1")?.fields["views"] == 11)
            let events = try allEvents(of: phone).filter { $0.updates["views"] != nil }
            #expect(events.map { $0.updates["views"]?.increment } == [5, 2, 3, 1])
        }
    }

    @Test func aModelSavedLongAfterItWasReadKeepsWhatSyncBroughtMeanwhile() async throws {
        try await Self.withReplicas { phone, laptop, _ in
            let onPhone = phone.collection(Note.self, named: "notes")
            try await onPhone.put(Note(id: "n1", title: "Plan", tags: ["a"], views: 5))
            try await Self.exchange(phone, laptop)
            // The phone opens the note in an edit screen…
            let read = try #require(try phone.item("notes", "n1"))
            var edited = try #require(try onPhone.get("n1"))
            // …while sync brings a tag and a view from the laptop.
            try await laptop.append([.edit("notes", id: "n1", ["tags": .add(["b"]), "views": .increment(by: 1)])])
            try await Self.exchange(phone, laptop)
            // Saved with the version it was read at: the laptop's edits stay.
            edited.title = "Plan, edited"
            try await phone.append([
                .put("notes", id: "n1", fields: fields(of: edited), base: read.version)
            ])
            #expect(try onPhone.get("n1") == Note(id: "n1", title: "Plan, edited", tags: ["a", "b"], views: 6))
            // TypedCollection.update reads and writes in one transaction.
            try await laptop.append([.edit("notes", id: "n1", ["tags": .add(["c"])])])
            try await Self.exchange(phone, laptop)
            try await onPhone.update("n1") { note in note.tags.removeAll { $0 == "a" } }
            try await Self.exchange(phone, laptop)
            for store in [phone, laptop] {
                #expect(try store.item("notes", "n1")?.fields["tags"] == ["b", "c"])
                #expect(try store.item("notes", "n1")?.fields["views"] == 6)
            }
            #expect(try await onPhone.update("missing") { _ in Issue.record("no such note") } == nil)
        }
    }

    /// A model's fields, as the typed layer writes them.
    func fields(of note: Note) -> [String: Value] {
        [
            "id": .string(note.id), "title": .string(note.title), "tags": .array(note.tags.map(Value.string)),
            "views": .int(Int64(note.views)),
        ]
    }

    @Test func aChangeAtAnOlderSchemaVersionMayNotWriteSetsAndCounters() async throws {
        var notes = Self.schema()
        notes.version = 2
        try await withTemporaryStore(configuration: Self.configuration(ManualClock(start: F.epoch), schemas: [notes])) {
            store in
            await #expect(throws: EventStoreError.self) {
                try await store.append([.put("notes", id: "n1", fields: ["title": "t", "tags": ["a"]], schema: 1)])
            }
            try await store.append([.put("notes", id: "n1", fields: ["title": "t"], schema: 1)])
            #expect(try store.head() == 1)
        }
    }

    @Test func deletingEmptiesSetsAndCountersAndALaterWriteStartsAfresh() async throws {
        try await withTemporaryStore(configuration: Self.configuration(ManualClock(start: F.epoch))) { store in
            try await store.append([.put("notes", id: "n1", fields: ["title": "t", "tags": ["a"], "views": 3])])
            try await store.delete("notes", id: "n1")
            #expect(try store.item("notes", "n1") == nil)
            try await store.append([.edit("notes", id: "n1", ["tags": .add(["b"])])])
            #expect(try store.item("notes", "n1")?.fields == ["tags": ["b"]], "an addition alone creates the item")
            try await store.append([.increment("notes", id: "n2", field: "views", by: 2)])
            #expect(try store.item("notes", "n2")?.fields == ["views": 2])
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func typedModelsDecodeMissingSetsAndCountersAsEmpty() async throws {
        try await withTemporaryStore(configuration: Self.configuration(ManualClock(start: F.epoch))) { store in
            try await store.put("notes", id: "n1", fields: ["title": "only a title"])
            let note = try store.collection(Note.self, named: "notes").get("n1")
            #expect(note == Note(id: "n1", title: "only a title", tags: [], views: 0))
        }
    }

    // MARK: Bad writes

    @Test func editsAndValuesAPolicyCannotTakeAreRefusedAndWriteNothing() async throws {
        try await withTemporaryStore(configuration: Self.configuration(ManualClock(start: F.epoch))) { store in
            try await store.put("notes", id: "n1", fields: ["title": "t"])
            let bad: [(Change, String)] = [
                (.increment("notes", id: "n1", field: "title"), "merges as lww"),
                (.edit("notes", id: "n1", ["views": .add(["x"])]), "merges as counter"),
                (.edit("notes", id: "n1", ["tags": .increment(by: 1)]), "merges as add-wins-set"),
                (.patch("notes", id: "n1", fields: ["views": 1.5]), "is a counter"),
                (.patch("notes", id: "n1", fields: ["tags": "solo"]), "is an add-wins set"),
                (.edit("notes", id: "n1", ["tags": FieldEdit(add: ["x"], remove: ["x"])]), "adds and removes the same"),
                (.edit("notes", id: "n1", ["tags": FieldEdit()]), "changes nothing"),
                (Change(collection: "notes", item: "n1", operation: .delete, edits: ["tags": .add(["x"])]), "no edits"),
            ]
            for (change, message) in bad {
                await #expect {
                    try await store.append([.put("notes", id: "n2", fields: ["title": "same batch"]), change])
                } throws: { error in
                    (error as? EventStoreError).map { $0.code == .invalidEvent && $0.message.contains(message) }
                        ?? false
                }
            }
            #expect(try store.head() == 1, "a refused batch writes nothing")
            #expect(try store.item("notes", "n2") == nil)
        }
    }

    @Test func receivedUpdatesThatAreNotWellFormedAreRefused() async throws {
        try await withTemporaryStore(configuration: Self.configuration(ManualClock(start: F.epoch + 1_000))) { store in
            let origin = ReplicaID(high: 9, low: 9)
            func event(_ sequence: UInt64, _ updates: [String: FieldUpdate], _ operation: EventOperation = .patch)
                -> Event
            {
                Event(
                    id: EventID(origin: origin, sequence: sequence), hlc: HLCTimestamp(physical: F.epoch, logical: 0),
                    collection: "notes", item: "n1", operation: operation, updates: updates)
            }
            let seen = EventID(origin: origin, sequence: 1)
            let bad: [[String: FieldUpdate]] = [
                ["tags": FieldUpdate(add: ["a", "a"])],
                ["tags": FieldUpdate(add: ["a"], increment: 1)],
                ["tags": FieldUpdate(remove: [.init(element: "a", seen: [])])],
                ["tags": FieldUpdate(remove: [.init(element: "a", seen: [seen, seen])])],
                ["tags": FieldUpdate(add: ["a"], remove: [.init(element: "a", seen: [seen])])],
                ["tags": FieldUpdate(add: [.double(.nan)])],
                ["": .increment(1)],
            ]
            for updates in bad {
                await #expect(throws: EventStoreError.self) { try await store.ingest([event(2, updates)]) }
            }
            #expect(try store.head() == 0)
            // A delete may carry updates; a patch of updates alone is a write.
            let result = try await store.ingest([
                event(1, ["tags": FieldUpdate(add: ["a"])]),
                event(2, ["tags": FieldUpdate(remove: [.init(element: "a", seen: [seen])])], .delete),
            ])
            #expect(result.appended.count == 2)
        }
    }

    // MARK: The store's record

    @Test func declaringAPolicyKeepsTheItemsAndToolsReadTheRecordedOne() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock(start: F.epoch)
        // Written with no policy: a plain list replaces.
        var store = try Store.open(at: directory.path, configuration: Self.configuration(clock, schemas: []))
        try await store.append([.put("notes", id: "n1", fields: ["title": "t", "tags": ["a"]])])
        try await store.append([.patch("notes", id: "n1", fields: ["tags": ["b"]])])
        #expect(try store.item("notes", "n1")?.fields["tags"] == ["b"])
        store.close()
        // Declared as a set: the last whole list is the set's own list; later writes merge.
        store = try Store.open(at: directory.path, configuration: Self.configuration(clock))
        #expect(try store.item("notes", "n1")?.fields["tags"] == ["b"])
        try await store.append([.edit("notes", id: "n1", ["tags": .add(["c"])])])
        try await store.append([.put("notes", id: "n1", fields: ["title": "t", "tags": ["c", "d"]])])
        #expect(try store.item("notes", "n1")?.fields["tags"] == ["c", "d"])
        #expect(try store.verify().isConsistent)
        store.close()
        // A tool's open (the recorded configuration) reads the same items and verifies.
        var tool = Store.Configuration()
        tool.readOnly = true
        tool.searchChange = .useStored
        store = try Store.open(at: directory.path, configuration: tool)
        #expect(try store.item("notes", "n1")?.fields["tags"] == ["c", "d"])
        #expect(store.configuration.schemaRegistry.policies(of: "notes") == ["tags": .addWinsSet, "views": .counter])
        store.close()
        var rebuilding = Store.Configuration()
        rebuilding.searchChange = .useStored
        store = try Store.open(at: directory.path, configuration: rebuilding)
        try await store.rebuildProjections()
        #expect(try store.verify().isConsistent)
        #expect(try store.item("notes", "n1")?.fields["tags"] == ["c", "d"])
        store.close()
    }

    @Test func oneDeclarationCarriesSearchFieldsAndIndexes() async throws {
        var tasks = CollectionSchema("tasks")
        tasks.searchFields = [.init(name: "name", weight: 2)]
        tasks.indexes = [["done", "due"]]
        var configuration = F.configuration()
        configuration.schemas = [tasks]
        try await withTemporaryStore(configuration: configuration) { store in
            try await store.put("tasks", id: "t1", fields: ["name": "water the garden", "done": false, "due": 3])
            #expect(try store.search("garden", in: "tasks").map(\.item.id) == ["t1"])
            let open = Query("tasks").filter(.equal("done", false)).sorted(by: "due")
            #expect(try store.query(open).items.map(\.id) == ["t1"])
            #expect(store.configuration.indexes.map(\.name) == ["tasks(done,due)"])
        }
        // Declared twice, differently: a clear error.
        configuration.search.collections["tasks"] = [.init(name: "title", weight: 1)]
        #expect(throws: EventStoreError.self) { try withTemporaryStore(configuration: configuration) { (_: Store) in } }
    }

    // MARK: Explaining

    @Test func historyExplainsAdditionsRemovalsAndIncrements() async throws {
        try await Self.withReplicas { phone, laptop, _ in
            try await phone.append([.put("notes", id: "n1", fields: ["title": "t", "tags": ["old"], "views": 1])])
            try await Self.exchange(phone, laptop)
            try await laptop.append([.edit("notes", id: "n1", ["tags": .add(["draft"])])])
            try await laptop.append([.edit("notes", id: "n1", ["tags": .remove(["draft", "old"])])])
            try await phone.append([.edit("notes", id: "n1", ["tags": .add(["draft"]), "views": .increment(by: 2)])])
            try await Self.exchange(phone, laptop)
            let tags = try phone.history(collection: "notes", item: "n1", field: "tags")
            #expect(tags.count == 4, "\(tags.map(\.reason))")
            #expect(tags.first?.reason.contains("taken away by a removal") == true, "\(tags.map(\.reason))")
            #expect(tags.contains { $0.reason.contains("it stays, added by") && $0.reason.contains("add wins") })
            #expect(tags.contains { $0.won && $0.reason.contains("adds \"draft\": in the set") })
            #expect(try phone.item("notes", "n1")?.fields["tags"] == ["draft"])
            let views = try phone.history(collection: "notes", item: "n1", field: "views")
            #expect(views.map(\.update?.increment) == [1, 2])
            #expect(views.allSatisfy { $0.won && $0.reason.contains("counted") })
            let steps = try phone.replaySteps(collection: "notes", item: "n1")
            #expect(steps.last?.itemAfter?.fields["views"] == 3)
            #expect(steps.contains { $0.changes.contains { $0.field == "tags" } })
        }
    }
}
