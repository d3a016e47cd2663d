import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Typed collections: `Codable & Identifiable` models stored as items, and decoding failures
/// that say which field holds what.
struct TypedCollectionTests {
    struct Note: Codable, Identifiable, Sendable, Equatable {
        struct Reminder: Codable, Sendable, Equatable {
            var at: Int64
            var repeats: Bool
        }
        var id: String
        var title: String
        var tags: [String]
        var done = false
        var rank: Int = 0
        var score: Double?
        var reminder: Reminder?
    }

    struct Chore: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var label: String
    }

    /// A model whose id is not a string: stored under its description.
    struct Reading: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var book: String
    }

    @Test func putGetPatchDelete() async throws {
        try await withTemporaryStore { store in
            let notes = store.collection(Note.self, named: "notes")
            let note = Note(
                id: "n1", title: "Groceries", tags: ["home", "집"], rank: 3, score: 0.5,
                reminder: .init(at: 1_800_000_000_000, repeats: true))
            let event = try await notes.put(note)
            #expect(event.collection == "notes" && event.item == "n1" && event.operation == .put)
            #expect(try notes.get("n1") == note)
            // The id is the item id, not a field; the rest are the coding keys.
            let item = try #require(try store.item("notes", "n1"))
            #expect(item.fields["id"] == nil)
            #expect(item["title"] == "Groceries")
            #expect(item["tags"] == ["home", "집"])
            #expect(item["reminder"] == ["at": 1_800_000_000_000, "repeats": true])
            #expect(item["rank"] == 3, "integers stay integers")

            try await notes.patch(id: "n1", \.done, to: true)
            try await notes.patch(id: "n1", \.title, to: "Groceries for Sunday")
            try await notes.patch(id: "n1", \.reminder, to: nil)
            try await notes.patch(id: "n1", fields: ["rank": 7, "tags": ["home"]])
            var expected = note
            expected.done = true
            expected.title = "Groceries for Sunday"
            expected.reminder = nil
            expected.rank = 7
            expected.tags = ["home"]
            #expect(try notes.get("n1") == expected)
            #expect(try notes.count() == 1)
            #expect(try store.search("sunday", in: "notes").map(\.item.id) == ["n1"], "typed writes are searchable")

            try await notes.delete(id: "n1")
            #expect(try notes.get("n1") == nil)
            #expect(try notes.count() == 0)
            #expect(try notes.get("never") == nil)
        }
    }

    @Test func anUpdateWritesWhatChangedAndKeepsFieldsTheModelDoesNotKnow() async throws {
        try await withTemporaryStore { store in
            // A newer release of the application wrote a field this model does not have.
            try await store.put(
                "notes", id: "n1",
                fields: [
                    "title": "Groceries", "tags": ["home"], "done": false, "rank": 0, "score": 0.5, "color": "blue",
                ])
            let notes = store.collection(Note.self, named: "notes")
            let event = try #require(
                try await notes.update("n1") { note in
                    note.title = "Groceries, milk"
                    note.score = nil
                })
            #expect(event.operation == .patch)
            #expect(event.fields == ["title": "Groceries, milk", "score": .null], "only what changed")
            let item = try #require(try store.item("notes", "n1"))
            #expect(item["color"] == "blue", "a field the model does not know stays")
            #expect(try notes.get("n1")?.score == nil && notes.get("n1")?.title == "Groceries, milk")
            // Nothing changed: nothing written.
            let head = try store.head()
            #expect(try await notes.update("n1") { note in note.title = "Groceries, milk" } == nil)
            #expect(try store.head() == head)
        }
    }

    /// An id of its own type, encoded as its raw value.
    struct Bookmark: Codable, Identifiable, Sendable, Equatable {
        struct ID: RawRepresentable, Codable, Hashable, Sendable { var rawValue: String }
        var id: ID
        var url: String
    }

    /// An id that encodes as an object: no item id.
    struct Pinned: Codable, Identifiable, Sendable {
        struct ID: Codable, Hashable, Sendable { var a: Int }
        var id: ID
    }

    @Test func aRawRepresentableIDIsStoredAsItsRawValueAndAnObjectIDIsRefused() async throws {
        try await withTemporaryStore { store in
            let bookmarks = store.collection(Bookmark.self, named: "bookmarks")
            let bookmark = Bookmark(id: .init(rawValue: "b1"), url: "https://example.org")
            try await bookmarks.put(bookmark)
            #expect(try store.item("bookmarks", "b1")?["url"] == "https://example.org")
            #expect(try bookmarks.get(.init(rawValue: "b1")) == bookmark)
            #expect(try bookmarks.all().models == [bookmark])
            try await bookmarks.put(bookmark)
            #expect(try bookmarks.count() == 1, "written again under the same item")
            await #expect(throws: EventStoreError.self) {
                try await store.collection(Pinned.self, named: "pinned").put(Pinned(id: .init(a: 1)))
            }
            #expect(try store.head() == 2)
        }
    }

    @Test func batchesPagesAndCounts() async throws {
        try await withTemporaryStore { store in
            let tasks = store.collection(Chore.self, named: "tasks")
            let all = (1...57).map { Chore(id: "c\($0)", label: "task \($0)") }
            let events = try await tasks.put(all)
            #expect(events.count == 57)
            #expect(Set(events.map(\.seq)).count == 57)
            #expect(try tasks.count() == 57)
            var seen: [Chore] = []
            var page = try tasks.all(limit: 10)
            seen += page.models
            while let next = page.next {
                #expect(page.models.count == 10)
                page = try tasks.all(after: next, limit: 10)
                seen += page.models
            }
            #expect(seen.count == 57)
            #expect(Set(seen.map(\.id)) == Set((1...57).map { "c\($0)" }))
            #expect(seen.map(\.id) == seen.map(\.id).sorted(), "id order")
            try await tasks.delete(id: "c10")
            try await tasks.patch(id: "c11", fields: ["label": "eleven"])
            #expect(try tasks.count() == 56)
            #expect(try tasks.get("c11")?.label == "eleven")
            #expect(try tasks.all(limit: 100).models.count == 56)
            #expect(try tasks.all(limit: 100).next == nil)
        }
    }

    @Test func nonStringIdentifiersRoundTrip() async throws {
        try await withTemporaryStore { store in
            let readings = store.collection(Reading.self, named: "readings")
            try await readings.put([Reading(id: 7, book: "Demian"), Reading(id: 12, book: "Siddhartha")])
            #expect(try store.item("readings", "7")?["book"] == "Demian", "stored under the id's description")
            #expect(try store.item("readings", "7")?["id"] == nil)
            #expect(try readings.get(7) == Reading(id: 7, book: "Demian"))
            #expect(try readings.all().models == [Reading(id: 12, book: "Siddhartha"), Reading(id: 7, book: "Demian")])

            // An id that reads as a number but not a finite one ("nan") is not one: the error is
            // the id's own type mismatch, not a missing value.
            try await store.append([.put("readings", id: "nan", fields: ["book": "Steppenwolf"])])
            do {
                _ = try readings.all()
                Issue.record("an item with the id \"nan\" decoded as a Reading")
            } catch let error as EventStoreError {
                #expect(error.code == .typeMismatch)
                #expect(!error.message.contains("null"), "\(error.message)")
            }
        }
    }

    struct Photo: Codable, Identifiable, Sendable, Equatable {
        var id: UUID
        var caption: String
    }

    @Test func uuidIdentifiersAndTheDefaultCollectionName() async throws {
        try await withTemporaryStore { store in
            let photos = store.collection(Photo.self)
            #expect(photos.name == "Photo")
            let photo = Photo(id: UUID(), caption: "Harbour at dawn")
            try await photos.put(photo)
            #expect(try store.item("Photo", photo.id.uuidString)?["caption"] == "Harbour at dawn")
            #expect(try photos.get(photo.id) == photo)
            #expect(try photos.get(UUID()) == nil)
            #expect(try photos.count() == 1)
        }
    }

    @Test func aDecodingFailureNamesTheFieldAndTheTypes() async throws {
        try await withTemporaryStore { store in
            let notes = store.collection(Note.self, named: "notes")
            try await store.put(
                "notes", id: "wrong-type", fields: ["title": "x", "tags": [], "done": false, "rank": "high"])
            await expectStoreError(.typeMismatch) { _ = try notes.get("wrong-type") }
            let message = try Self.message { _ = try notes.get("wrong-type") }
            #expect(message.contains("'rank'"), "\(message)")
            #expect(message.contains("Int"), "\(message)")
            #expect(message.contains("string"), "\(message)")
            #expect(message.contains("notes/wrong-type"), "\(message)")

            try await store.put("notes", id: "missing", fields: ["tags": ["a"], "done": false, "rank": 1])
            let missing = try Self.message { _ = try notes.get("missing") }
            #expect(missing.contains("'title'") && missing.contains("missing"), "\(missing)")

            try await store.put(
                "notes", id: "nested",
                fields: [
                    "title": "x", "tags": [], "done": true, "rank": 1, "reminder": ["at": "soon", "repeats": true],
                ])
            let nested = try Self.message { _ = try notes.get("nested") }
            #expect(nested.contains("reminder.at"), "\(nested)")

            try await store.put(
                "notes", id: "element", fields: ["title": "x", "tags": ["ok", 5], "done": true, "rank": 1])
            let element = try Self.message { _ = try notes.get("element") }
            #expect(element.contains("tags") && element.contains("String"), "\(element)")

            // One bad item fails a page too, and says which.
            await expectStoreError(.typeMismatch) { _ = try notes.all() }
        }
    }

    /// The message of the ``EventStoreError`` that `body` throws.
    static func message(_ body: () throws -> Void) throws -> String {
        do {
            try body()
        } catch let error as EventStoreError {
            return error.message
        }
        Issue.record("nothing was thrown")
        return ""
    }
}
