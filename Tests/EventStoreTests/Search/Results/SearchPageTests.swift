import EventStoreTestSupport
import Testing

@testable import EventStore

/// Search pages: the hit count, facets over every hit, field filters, and highlights on the
/// results returned.
struct SearchPageTests {
    static let notes: [Change] = [
        .put(
            "notes", id: "n1",
            fields: ["title": "Sync design", "content": "event ranges", "tags": ["work", "sync"], "folder": "a"]),
        .put(
            "notes", id: "n2",
            fields: ["title": "Sync meeting", "content": "notes of the sync", "tags": ["work"], "folder": "b"]),
        .put(
            "notes", id: "n3",
            fields: ["title": "Groceries", "content": "sync the list", "tags": ["home"], "folder": "a"]),
        .put(
            "notes", id: "n4", fields: ["title": "동기화 메모", "content": "오프라인에서 동기화를", "tags": ["work"], "folder": "a"]),
        .put(
            "notes", id: "n5", fields: ["title": "Other", "content": "nothing here", "tags": ["home"], "folder": "b"]),
    ]

    @Test func facetsCountEveryHitNotOnlyThePage() async throws {
        try await withTemporaryStore { store in
            try await store.append(Self.notes)
            var query = SearchQuery("sync", collection: "notes", limit: 1, facets: ["tags", "folder"])
            let page = try store.searchPage(query)
            #expect(page.results.count == 1 && page.total == 3)
            #expect(
                page.facets["tags"] == [
                    FacetCount(value: "work", count: 2), FacetCount(value: "home", count: 1),
                    FacetCount(value: "sync", count: 1),
                ])
            #expect(page.facets["folder"] == [FacetCount(value: "a", count: 2), FacetCount(value: "b", count: 1)])
            // Restricted by a facet value: a tag, or a field through the filter.
            query.tags = ["work"]
            #expect(try store.searchPage(query).total == 2)
            query.tags = []
            query.filter = .equal("folder", "a")
            let inFolder = try store.searchPage(query)
            #expect(inFolder.total == 2 && inFolder.facets["folder"] == [FacetCount(value: "a", count: 2)])
            query.facetLimit = 1
            query.filter = nil
            #expect(try store.searchPage(query).facets["tags"]?.count == 1)
            // A page of no results still counts.
            query.limit = 0
            #expect(try store.searchPage(query).total == 3)
            // Deleted items are neither counted nor returned.
            try await store.delete("notes", id: "n2")
            let afterDelete = try store.searchPage(SearchQuery("sync", collection: "notes", facets: ["tags"]))
            #expect(afterDelete.total == 2)
            #expect(afterDelete.facets["tags"]?.map(\.value) == ["home", "sync", "work"], "equal counts in byte order")
        }
    }

    @Test func theFilteredSearchIsExactWhateverTheHitsItRejects() async throws {
        try await withTemporaryStore { store in
            // 300 hits in folder "b" rank above the 3 in folder "a".
            try await store.append(
                (0..<300).map { .put("notes", id: "b\($0)", fields: ["title": "sync sync sync", "folder": "b"]) })
            try await store.append(
                (0..<3).map { .put("notes", id: "a\($0)", fields: ["content": "sync and more words", "folder": "a"]) })
            let hits = try store.search("sync", in: "notes", filter: .equal("folder", "a"), limit: 10)
            #expect(hits.map(\.item.id) == ["a0", "a1", "a2"])
        }
    }

    @Test func resultsCarryHighlightsOfTheFieldsThatMatched() async throws {
        try await withTemporaryStore { store in
            try await store.append(Self.notes)
            var query = SearchQuery("sync", collection: "notes")
            query.highlights = HighlightOptions(open: "<", close: ">")
            let results = try store.search(query)
            let n1 = try #require(results.first { $0.item.id == "n1" })
            #expect(n1.highlights["title"]?.marked == "<Sync> design")
            #expect(n1.highlights["tags"]?.marked == "work, <sync>")
            #expect(n1.highlights["content"] == nil, "no match in the content")
            let korean = try store.search(SearchQuery("동기화", collection: "notes", highlights: HighlightOptions()))
            #expect(korean.first?.highlights["content"]?.marked == "오프라인에서 <b>동기화</b>를")
            // Without the option, results carry none.
            #expect(try store.search(SearchQuery("sync", collection: "notes")).allSatisfy(\.highlights.isEmpty))
        }
    }

    @Test func koreanQueriesPhrasesAndTyposCountFacetsAndAreRestrictedByThem() async throws {
        try await withTemporaryStore { store in
            try await store.append(
                Self.notes + [
                    .put("notes", id: "k1", fields: ["title": "동기화 계획", "content": "이번 주", "tags": ["업무", "집"]]),
                    .put("notes", id: "k2", fields: ["title": "집에서 동기화를 했다", "tags": ["집"]]),
                    .put("notes", id: "k3", fields: ["title": "계획 없음", "tags": ["업무"]]),
                ])
            // A word with a particle matches; every hit is counted, not only the page.
            var query = SearchQuery("동기화", collection: "notes", limit: 1, facets: ["tags"])
            let page = try store.searchPage(query)
            #expect(page.total == 3, "n4, k1, k2")
            #expect(
                page.facets["tags"] == [
                    FacetCount(value: "집", count: 2), FacetCount(value: "work", count: 1),
                    FacetCount(value: "업무", count: 1),
                ], "by count, then in byte order")
            // Restricted by a Korean tag.
            query.tags = ["집"]
            query.limit = 10
            let home = try store.searchPage(query)
            #expect(Set(home.results.map(\.item.id)) == ["k1", "k2"] && home.total == 2)
            // A phrase: the words adjacent and in order.
            let phrase = try store.searchPage(SearchQuery("\"동기화 계획\"", collection: "notes", facets: ["tags"]))
            #expect(phrase.results.map(\.item.id) == ["k1"])
            #expect(
                phrase.facets["tags"] == [FacetCount(value: "업무", count: 1), FacetCount(value: "집", count: 1)],
                "equal counts in the order of their UTF-8 bytes, whatever their lengths")
            // A typo: the facets count the hits the close term found.
            let typo = try store.searchPage(SearchQuery("meetnig", collection: "notes", facets: ["tags"]))
            #expect(typo.results.map(\.item.id) == ["n2"] && typo.results.first?.typos == 1)
            #expect(typo.facets["tags"] == [FacetCount(value: "work", count: 1)])
        }
    }

    @Test func numbersEqualInQueryTermsCountAsOneFacetValueAndTiesSortAsQueriesDo() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "a", fields: ["title": "sync", "priority": .int(1)]),
                .put("notes", id: "b", fields: ["title": "sync", "priority": .double(1.0)]),
                .put("notes", id: "c", fields: ["title": "sync", "priority": .int(10)]),
                .put("notes", id: "d", fields: ["title": "sync", "priority": .double(2.5)]),
            ])
            let page = try store.searchPage(SearchQuery("sync", collection: "notes", facets: ["priority"]))
            let facets = try #require(page.facets["priority"])
            #expect(facets.map(\.count) == [2, 1, 1])
            #expect(facets.first?.value.doubleValue == 1)
            #expect(facets.dropFirst().map(\.value) == [.double(2.5), .int(10)], "by value, not by encoding")
        }
    }
}
