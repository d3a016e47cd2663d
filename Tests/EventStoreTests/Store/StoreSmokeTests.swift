import EventStore
import EventStoreTestSupport
import Testing

struct StoreSmokeTests {
    @Test func putReadSearch() async throws {
        try await withTemporaryStore { store in
            let event = try await store.put("notes", id: "n1", fields: ["title": "Sync design", "tags": ["work"]])
            #expect(event.seq == 1)
            let item = try #require(try store.item("notes", "n1"))
            #expect(item["title"] == "Sync design")
            let hits = try store.search("sync", in: "notes")
            #expect(hits.map(\.item.id) == ["n1"])
            try await store.delete("notes", id: "n1")
            #expect(try store.item("notes", "n1") == nil)
            #expect(try store.search("sync", in: "notes").isEmpty)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
    }
}
