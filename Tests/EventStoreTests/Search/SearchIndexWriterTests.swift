import EventStoreTestSupport
import Testing

@testable import EventStore

/// The search index under unusual content: very long words and tags, many fields, configured
/// fields and weights. Whatever an item holds, writing it must not fail in the index.
struct SearchIndexWriterTests {
    typealias F = ProjectionFixtures

    @Test func aVeryLongWordIsIndexedByItsBeginning() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            let word = String(repeating: "abcdefghij", count: 100)
            try await store.put(
                String(repeating: "c", count: 64), id: String(repeating: "i", count: 255),
                fields: ["title": .string(word)])
            #expect(try store.search(String(word.prefix(20)), limit: 5).count == 1)
            #expect(try store.verify().isConsistent)
        }
    }

    /// Tags are filter terms; a long one must not make the write fail (LMDB keys are at most
    /// 511 bytes: the index must shorten, hash or refuse such tags with a validation error).
    @Test(arguments: [400, 600, 2_000])
    func aLongTagDoesNotBreakTheWrite(length: Int) async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            let tag = String(repeating: "t", count: length)
            do {
                try await store.put("notes", id: "n1", fields: ["title": "long tag", "tags": [.string(tag), "short"]])
            } catch let error as EventStoreError where error.code == .invalidEvent || error.code == .invalidName {
                // Refusing the change up front is acceptable; failing inside the storage engine is not.
                #expect(try store.head() == 0)
                return
            }
            #expect(
                try store.search(SearchQuery("long", collection: "notes", tags: ["short"])).map(\.item.id) == ["n1"])
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func searchingForALongTagOrWordFindsNothingWithoutFailing() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.put("notes", id: "n1", fields: ["title": "short", "tags": ["short"]])
            let long = String(repeating: "q", count: 1_000)
            #expect(try store.search(SearchQuery("short", collection: "notes", tags: [long])).isEmpty)
            #expect(try store.search(SearchQuery(long, collection: "notes")).isEmpty)
            #expect(try store.search(SearchQuery("short", tags: [long])).isEmpty)
        }
    }

    @Test func configuredFieldsAndWeightsDecideWhatIsFoundAndHowItRanks() async throws {
        var configuration = F.configuration()
        configuration.search.collections["tasks"] = [.init(name: "summary", weight: 5), .init(name: "body", weight: 1)]
        configuration.search.collections["private"] = []
        try await withTemporaryStore(configuration: configuration) { store async throws in
            try await store.append([
                .put("tasks", id: "in-body", fields: ["summary": "call the bank", "body": "renew passport"]),
                .put("tasks", id: "in-summary", fields: ["summary": "renew passport", "body": "bring photos"]),
                .put("tasks", id: "title-only", fields: ["title": "renew passport"]),
                .put("private", id: "secret", fields: ["title": "renew passport"]),
                .put("notes", id: "note", fields: ["title": "renew passport"]),
            ])
            #expect(try store.search("renew passport", in: "tasks").map(\.item.id) == ["in-summary", "in-body"])
            #expect(try store.search("passport", in: "private").isEmpty)
            #expect(try store.search("passport").map(\.item.id).sorted() == ["in-body", "in-summary", "note"])
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func nonStringValuesAreNotIndexedButNestedArraysOfStringsAre() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append([
                .put("notes", id: "numbers", fields: ["title": 12_345, "content": ["nested": "hidden words"]]),
                .put("notes", id: "arrays", fields: ["content": ["visible", ["deeper words"], 7, nil]]),
            ])
            #expect(try store.search("12345", in: "notes").isEmpty)
            #expect(try store.search("hidden", in: "notes").isEmpty)
            #expect(try store.search("deeper", in: "notes").map(\.item.id) == ["arrays"])
            #expect(try store.search("visible", in: "notes").map(\.item.id) == ["arrays"])
        }
    }
}
