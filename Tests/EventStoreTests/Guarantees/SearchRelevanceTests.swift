import EventStoreTestSupport
import Testing

@testable import EventStore

/// Search quality on an English and Korean fixture of 240 notes.
struct SearchRelevanceTests {
    /// Targets: id, title, content, tags. The queries below must find them first or in the top 3.
    static let targets: [(String, String, String, [String])] = [
        ("t-sync", "Offline sync design", "How replicas exchange event ranges and merge fields", ["work", "design"]),
        ("t-hlc", "Hybrid logical clocks", "Timestamps that never go backwards across devices", ["work"]),
        ("t-lmdb", "LMDB map growth", "Grow the memory map when a write fills it", ["storage"]),
        ("t-bm25", "Ranking with BM25", "Term frequency, document length and field weights", ["search"]),
        ("t-kimchi", "Kimchi stew recipe", "Pork, aged kimchi, tofu and gochugaru", ["cooking", "home"]),
        ("t-garden", "Garden planting schedule", "Tomatoes in May, garlic in October", ["home", "garden"]),
        ("t-marathon", "Marathon training plan", "Long runs on Sunday, intervals on Wednesday", ["sport"]),
        ("t-tax", "Tax return checklist", "Receipts, pension statements, deductions", ["finance"]),
        ("t-piano", "Piano practice notes", "Chopin nocturne, slow left hand arpeggios", ["music"]),
        ("t-seoul", "Seoul trip itinerary", "Gyeongbokgung palace, Bukchon village, Namsan tower", ["travel"]),
        ("t-ko-sync", "동기화 설계 메모", "오프라인에서 동기화를 테스트하고 충돌을 필드 단위로 병합한다", ["work", "회의"]),
        ("t-ko-food", "김치찌개 만드는 법", "잘 익은 김치와 돼지고기, 두부를 넣고 끓인다", ["요리"]),
        ("t-ko-trip", "부산 여행 계획", "해운대 해변과 감천 문화마을을 방문한다", ["여행"]),
        ("t-ko-study", "데이터베이스 공부", "트랜잭션과 인덱스 구조를 복습한다", ["공부"]),
        ("t-ko-health", "건강 검진 예약", "다음 주 화요일 오전에 병원 방문", ["건강"]),
        ("t-cafe", "Café reviews", "The crème brûlée at the corner café was excellent", ["food"]),
    ]

    static let queries: [(String, String)] = [
        ("offline sync", "t-sync"), ("sync design", "t-sync"), ("event ranges", "t-sync"), ("offl", "t-sync"),
        ("hybrid clocks", "t-hlc"), ("logical", "t-hlc"), ("timestamps devices", "t-hlc"), ("lmdb", "t-lmdb"),
        ("map growth", "t-lmdb"), ("bm25", "t-bm25"), ("ranking", "t-bm25"), ("field weights", "t-bm25"),
        ("kimchi stew", "t-kimchi"), ("gochugaru", "t-kimchi"), ("tomatoes garlic", "t-garden"),
        ("planting", "t-garden"),
        ("marathon", "t-marathon"), ("intervals", "t-marathon"), ("tax receipts", "t-tax"), ("pension", "t-tax"),
        ("chopin", "t-piano"), ("nocturne arpeggios", "t-piano"), ("seoul palace", "t-seoul"), ("namsan", "t-seoul"),
        ("동기화", "t-ko-sync"), ("오프라인", "t-ko-sync"), ("충돌 병합", "t-ko-sync"), ("김치찌개", "t-ko-food"),
        ("두부", "t-ko-food"), ("부산 여행", "t-ko-trip"), ("해운대", "t-ko-trip"), ("데이터베이스", "t-ko-study"),
        ("트랜잭션", "t-ko-study"), ("건강 검진", "t-ko-health"), ("cafe", "t-cafe"), ("creme brulee", "t-cafe"),
        ("CAFÉ", "t-cafe"), ("Seoul", "t-seoul"),
    ]

    static let filler = [
        "meeting", "notes", "weekly", "review", "project", "update", "ideas", "list", "draft", "plan", "call", "email",
        "budget", "report", "summary", "followup", "agenda", "reminder", "todo", "journal", "회의록", "메모", "일정",
        "주간", "보고서", "아이디어", "할일", "정리", "계획", "요약",
    ]

    static func fill(_ store: Store) async throws {
        var random = SeededGenerator(seed: 240)
        func words(_ count: Int) -> String {
            (0..<count).map { _ in filler[Int(random.next() % UInt64(filler.count))] }.joined(separator: " ")
        }
        var changes: [Change] = targets.map { id, title, content, tags in
            .put(
                "notes", id: id,
                fields: ["title": .string(title), "content": .string(content), "tags": .array(tags.map(Value.string))])
        }
        for index in 0..<224 {
            changes.append(
                .put(
                    "notes", id: "f\(index)",
                    fields: [
                        "title": .string(words(3)), "content": .string(words(20)),
                        "tags": [.string(filler[index % filler.count])],
                    ]))
        }
        try await store.append(changes)
    }

    @Test func expectedItemsRankFirstOrInTheTopThree() async throws {
        try await withTemporaryStore { store in
            try await SearchRelevanceTests.fill(store)
            #expect(try store.count(in: "notes") == 240)
            var first = 0
            for (query, expected) in SearchRelevanceTests.queries {
                let ids = try store.search(SearchQuery(query, collection: "notes", limit: 3)).map(\.item.id)
                #expect(ids.contains(expected), "\(query) → \(ids)")
                if ids.first == expected { first += 1 }
            }
            #expect(first >= 30, "\(first) of \(SearchRelevanceTests.queries.count) queries ranked the target first")
        }
    }

    /// Misspelt queries a person would still expect to find the note: one edit in a word of 5
    /// to 8 characters, two in a longer one (swaps count as one), the last word as a prefix.
    static let typoQueries: [(String, String)] = [
        ("ofline sync", "t-sync"), ("hybird clocks", "t-hlc"), ("timestmaps", "t-hlc"), ("marathno", "t-marathon"),
        ("gochugaur", "t-kimchi"), ("tomatos garlic", "t-garden"), ("nocturen", "t-piano"), ("itinerray", "t-seoul"),
        ("pension statemnts", "t-tax"), ("arpegios chopin", "t-piano"), ("plantign", "t-garden"),
        ("kimhci stew", "t-kimchi"),
    ]

    @Test func misspeltQueriesFindTheNoteAndExactMatchesRankAboveTypos() async throws {
        try await withTemporaryStore { store in
            try await SearchRelevanceTests.fill(store)
            for (query, expected) in SearchRelevanceTests.typoQueries {
                let found = try store.search(SearchQuery(query, collection: "notes", limit: 3))
                #expect(found.first?.item.id == expected, "\(query) → \(found.map(\.item.id))")
                #expect(found.first.map { $0.typos > 0 } == true, "\(query): found through a typo")
                #expect(
                    try store.search(SearchQuery(query, collection: "notes", typos: .off)).isEmpty,
                    "\(query) as written")
            }
            // Words that are right are never overruled by a neighbour a typo away: every exact
            // query finds the same first note with typos always on, and with no edits.
            for (query, expected) in SearchRelevanceTests.queries {
                let found = try store.search(SearchQuery(query, collection: "notes", limit: 3, typos: .always))
                #expect(found.contains { $0.item.id == expected }, "\(query) → \(found.map(\.item.id))")
                #expect(found.first?.typos == 0, "\(query): an exact match ranks first")
            }
            // Korean syllables and numbers take no typos: a different syllable is another word.
            #expect(try store.search(SearchQuery("동기하", collection: "notes")).isEmpty)
            #expect(try store.search(SearchQuery("해운데", collection: "notes")).isEmpty)
        }
    }

    /// Quoted phrases a person would expect to find the note, in English and Korean (a particle
    /// may follow a Korean word), and phrases whose words are there but not together in order.
    @Test func phrasesFindTheNoteWhoseWordsStandTogether() async throws {
        try await withTemporaryStore { store in
            try await SearchRelevanceTests.fill(store)
            let found: [(String, String)] = [
                (#""offline sync design""#, "t-sync"), (#""hybrid logical clocks""#, "t-hlc"),
                (#""slow left hand""#, "t-piano"), (#""crème brûlée""#, "t-cafe"),
                (#"tomatoes "garlic in october""#, "t-garden"),
                (#""동기화를 테스트""#, "t-ko-sync"), (#""동기화 테스트""#, "t-ko-sync"), (#""감천 문화마을""#, "t-ko-trip"),
            ]
            for (query, expected) in found {
                #expect(
                    try store.search(SearchQuery(query, collection: "notes")).map(\.item.id) == [expected], "\(query)")
            }
            for query in [#""sync offline""#, #""clocks hybrid""#, #""테스트 동기화""#, #""garlic in may""#] {
                #expect(try store.search(SearchQuery(query, collection: "notes", typos: .off)).isEmpty, "\(query)")
            }
        }
    }

    @Test func tagFiltersDeletesAndUpdates() async throws {
        try await withTemporaryStore { store in
            try await SearchRelevanceTests.fill(store)
            let home = try store.search(SearchQuery("", collection: "notes", tags: ["home"], limit: 50)).map(\.item.id)
            #expect(Set(home) == ["t-kimchi", "t-garden"])
            #expect(try store.search(SearchQuery("kimchi", collection: "notes", tags: ["work"])).isEmpty)
            #expect(
                try store.search(SearchQuery("동기화", collection: "notes", tags: ["회의"])).map(\.item.id) == ["t-ko-sync"])

            try await store.delete("notes", id: "t-kimchi")
            #expect(try store.search("kimchi", in: "notes").isEmpty)
            #expect(
                try store.search(SearchQuery("", collection: "notes", tags: ["home"])).map(\.item.id) == ["t-garden"])

            try await store.patch("notes", id: "t-piano", fields: ["content": "Bach invention, two voices"])
            #expect(try store.search("chopin", in: "notes").isEmpty, "old words stop matching")
            #expect(try store.search("bach invention", in: "notes").first?.item.id == "t-piano")
            #expect(
                try store.search("piano", in: "notes").first?.item.id == "t-piano", "the unchanged title still matches")
            #expect(try store.verify().isConsistent)
        }
    }
}
