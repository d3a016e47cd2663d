// swift-format-ignore-file
// (The regions below are the README's text, column for column.)
import EventStore
import Foundation
import Testing

/// The Swift examples of the README's Quick start, compiled and run: between its `README:` markers
/// each function holds one block of the README exactly as it stands there, except that
/// `"/var/lib/myapp/` is written `"\(directory)/` and the block's `import` lines are at the top
/// of this file. ``ReadmeExampleTests`` checks that the two stay the same, then runs them.
enum ReadmeExamples {
    /// The Quick start's first block: writes, reads, search, typed models, live changes.
    static func basics(in directory: String) async throws {
        // README: begin
        let store = try Store.open(at: "\(directory)/store")

        // Writes are atomic, durable when they return, and group-committed across concurrent tasks.
        try await store.append([
            .put("notes", id: "n1", fields: ["title": "Offline sync design", "content": "Event ranges and synchronization", "tags": ["work"]]),
            .put("notes", id: "n2", fields: ["title": "동기화 메모", "content": "오프라인에서 동기화를 테스트", "tags": ["work"]]),
        ])
        try await store.patch("notes", id: "n1", fields: ["pinned": true])

        // Reads are consistent snapshots that never wait for writers.
        let note = try store.item("notes", "n1")                      // Item? with .fields
        let hits = try store.search(SearchQuery("offl", collection: "notes", tags: ["work"]))   // prefix match, BM25
        let korean = try store.search("동기화", in: "notes")            // finds "동기화를"
        let phrase = try store.search(#""sync design" offline"#, in: "notes")  // quoted: adjacent, in order
        let typo = try store.search("synchroniztion", in: "notes")     // a typo away: "synchronization"
        let page = try store.searchPage(SearchQuery("sync", collection: "notes", facets: ["tags"], highlights: HighlightOptions()))
        print(page.total, page.facets["tags"] ?? [], page.results.first?.highlights["title"]?.marked ?? "")   // "Offline <b>sync</b> design"

        // Typed models.
        struct Note: Codable, Identifiable, Sendable { var id: String; var title: String; var tags: [String] }
        let notes = store.collection(Note.self, named: "notes")
        try await notes.put(Note(id: "n3", title: "Groceries", tags: ["home"]))

        // Live changes: catch up from a seq, then follow new commits until the task is cancelled.
        let follower = Task {
            for try await change in store.changes(after: 0) { print(change.seq, change.id) }
        }
        follower.cancel()                                              // when the app no longer needs them
        // README: end
        #expect(note?.fields["pinned"] == true)
        #expect(hits.map(\.item.id).contains("n1"), "a prefix of a word in the title")
        #expect(korean.map(\.item.id) == ["n2"], "a word's stem in Korean text")
        #expect(phrase.first?.item.id == "n1")
        #expect(typo.map(\.item.id) == ["n1"], "one edit away from a word of n1")
        #expect(page.results.first?.highlights["title"]?.marked == "Offline <b>sync</b> design")
        #expect(try notes.get("n3")?.title == "Groceries")
    }

    /// The second block: a declared index, a query and a live query.
    static func queries(in directory: String) async throws {
        // README: begin
        var configuration = Store.Configuration()
        configuration.indexes = [IndexDefinition("tasks", fields: ["done", "due"])]
        let tasks = try Store.open(at: "\(directory)/tasks", configuration: configuration)
        let open = Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(50)
        let page = try tasks.query(open)                                   // page.items, page.next (a keyset cursor)
        let updates = Task {                                               // the answer now, then each changed one
            for try await answer in tasks.observe(open) { print(answer.items.map(\.id)) }
        }
        updates.cancel()                                                   // when the view goes away
        // README: end
        #expect(page.items.isEmpty)
    }

    /// The third block: a collection schema with an upcaster, a set and a counter.
    static func schemas(in directory: String) async throws {
        // README: begin
        var notes = CollectionSchema("notes", version: 2, defaults: ["done": false])
        notes.upcast(from: 1, [.renameField("title", to: "name")])   // recorded in the store: tools read it too
        notes.merge("tags", as: .addWinsSet)                         // tags added on two offline devices: both kept
        notes.merge("views", as: .counter)                           // concurrent increments add up
        var configuration = Store.Configuration()
        configuration.schemas = [notes]                              // a raised version rebuilds on open
        let store = try Store.open(at: "\(directory)/store", configuration: configuration)
        try await store.append([.edit("notes", id: "n1", ["tags": .add(["work"]), "views": .increment(by: 1)])])
        // README: end
        let item = try store.item("notes", "n1")
        #expect(item?.fields["tags"] == ["work"])
        #expect(item?.fields["views"] == 1)
    }
}
