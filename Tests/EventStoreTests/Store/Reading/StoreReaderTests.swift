import EventStoreTestSupport
import Testing

@testable import EventStore

/// Reading a store: item counts, pagination, collections, the log and per-item histories.
struct StoreReaderTests {
    typealias F = ProjectionFixtures

    /// Ids that sort differently as bytes, as characters and as numbers.
    static let ids =
        (0..<137).map { "n\($0)" } + ["Zeta", "alpha", "Ärger", "메모-1", "메모-2", "a", "a-", "a.b", "_", "~"]

    @Test(arguments: [1, 7, 100, 1_000])
    func paginationReturnsEveryItemOnceInByteOrder(pageSize: Int) async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append(Self.ids.map { .put("notes", id: $0, fields: ["title": .string($0)]) })
            try await store.append([
                .put("other", id: "o", fields: [:]), .delete("notes", id: "n5"), .delete("notes", id: "alpha"),
            ])
            let pages = try store.read { reader throws in
                var pages = [try reader.items(in: "notes", limit: pageSize)]
                while let next = pages.last?.next {
                    pages.append(try reader.items(in: "notes", after: next, limit: pageSize))
                }
                return pages
            }
            let ids = pages.flatMap(\.items).map(\.id)
            let expected = Self.ids.filter { $0 != "n5" && $0 != "alpha" }.sorted {
                $0.utf8.lexicographicallyPrecedes($1.utf8)
            }
            #expect(ids == expected)
            #expect(pages.dropLast().allSatisfy { $0.items.count == pageSize })
            #expect(pages.last?.next == nil)
            #expect(try store.count(in: "notes") == expected.count)
            #expect(pages.flatMap(\.items).allSatisfy { $0.collection == "notes" && $0["title"] == .string($0.id) })
        }
    }

    @Test func paginationStaysStableWhileWritesHappenBetweenPages() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append((10..<40).map { .put("notes", id: "n\($0)", fields: [:]) })
            let first = try store.read { try $0.items(in: "notes", limit: 10) }
            #expect(first.next == "n19")
            // An item before the cursor and one after it arrive; one after it goes away.
            try await store.append([
                .put("notes", id: "n0", fields: [:]), .put("notes", id: "n99", fields: [:]),
                .delete("notes", id: "n25"),
            ])
            var seen = first.items.map(\.id)
            var next = first.next
            while let cursor = next {
                let page = try store.read { try $0.items(in: "notes", after: cursor, limit: 10) }
                seen += page.items.map(\.id)
                next = page.next
            }
            #expect(Set(seen).count == seen.count, "no item twice")
            #expect(seen.contains("n99") && !seen.contains("n25") && !seen.contains("n0"))
            #expect(seen.count == 30 - 1 + 1)
        }
    }

    @Test func countsFollowCreationDeletionAndRevival() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            #expect(try store.count(in: "notes") == 0)
            try await store.append((0..<10).map { .put("notes", id: "n\($0)", fields: ["i": .int(Int64($0))]) })
            try await store.append((0..<4).map { .delete("notes", id: "n\($0)") })
            try await store.delete("notes", id: "n0")  // deleting a deleted item changes nothing
            try await store.delete("notes", id: "never")  // nor does deleting a missing one
            try await store.patch("notes", id: "n1", fields: ["i": 100])  // revives n1
            try await store.put("tasks", id: "t", fields: [:])  // an item without fields exists
            #expect(try store.count(in: "notes") == 7)
            #expect(try store.count(in: "tasks") == 1)
            #expect(try F.items(store, in: "notes").count == 7)
            #expect(try store.read { try $0.collections() } == ["notes", "tasks"])
            #expect(try store.item("notes", "n1")?.fields == ["i": 100])
            #expect(try store.item("notes", "never") == nil)
        }
    }

    @Test func theLogReadsByRangeByIdAndByItem() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            let events = try await store.append(
                (0..<20).map { .put("notes", id: "n\($0 % 4)", fields: ["i": .int(Int64($0))]) })
            try store.read { reader throws in
                #expect(try reader.head() == 20)
                var seen: [UInt64] = []
                try reader.forEachEvent(from: 5, through: 9) { event in
                    seen.append(event.seq)
                    return true
                }
                #expect(seen == [5, 6, 7, 8, 9])
                var cursor = reader.events(from: 18)
                var tail: [Event] = []
                while let event = try cursor.next() { tail.append(event) }
                #expect(tail == Array(events[17...]))
                #expect(try reader.event(at: 21) == nil && reader.event(at: 0) == nil)
                #expect(try reader.event(id: events[3].id) == events[3])
                #expect(try reader.seq(of: events[3].id) == 4)
                #expect(try reader.seq(of: EventID(origin: .random(), sequence: 1)) == nil)
                let history = try reader.events(collection: "notes", item: "n2")
                #expect(history.map(\.seq) == [3, 7, 11, 15, 19])
                #expect(try reader.events(collection: "notes", item: "n").isEmpty, "no prefix matches")
            }
        }
    }

    @Test func metadataIsWrittenWithEventsAndReservedKeysAreRefused() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.write { writer throws in
                try writer.append(.put("notes", id: "n", fields: [:]))
                try writer.setMetadata([1, 2], forKey: "app.cursor")
                try writer.setMetadata([3], forKey: "app.other")
            }
            await expectStoreError(.invalidName) {
                try await store.write { try $0.setMetadata([1], forKey: "store.format") }
            }
            await expectStoreError(.invalidName) { try await store.write { try $0.setMetadata([1], forKey: "") } }
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await store.write { writer throws in
                    try writer.setMetadata([9], forKey: "app.cursor")
                    throw Abort()
                }
            }
            try store.read { reader throws in
                #expect(try reader.metadata(forKey: "app.cursor") == [1, 2], "the aborted write changed nothing")
                #expect(try reader.metadata(withPrefix: "app.").map(\.key) == ["app.cursor", "app.other"])
            }
            try await store.write { try $0.setMetadata(nil, forKey: "app.other") }
            #expect(try store.read { try $0.metadata(forKey: "app.other") } == nil)
        }
    }
}
