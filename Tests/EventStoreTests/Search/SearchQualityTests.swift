import EventStoreTestSupport
import Testing

@testable import EventStore

/// Search quality on a fixture of 224 English and Korean notes: known targets rank first (or in
/// the top 3) for their queries, prefixes and tags work, deletes and updates show at once.
struct SearchQualityTests {
    struct Target {
        var id: String
        var title: String
        var content: String
        var tags: [String]
    }

    static let targets: [Target] = [
        Target(
            id: "t-bread", title: "Sourdough bread schedule",
            content: "Feed the starter at night, bake at dawn with rye flour", tags: ["kitchen", "baking"]),
        Target(
            id: "t-bike", title: "Bicycle repair log",
            content: "Replaced the rear derailleur cable and trued the wheel", tags: ["bike", "repair"]),
        Target(
            id: "t-visa", title: "Visa application documents",
            content: "Passport photos, bank statements, invitation letter from the embassy", tags: ["travel", "admin"]),
        Target(
            id: "t-forecast", title: "Quarterly revenue forecast",
            content: "Spreadsheet with churn assumptions and pricing scenarios", tags: ["work", "finance"]),
        Target(
            id: "t-birds", title: "Birdwatching at the lake",
            content: "Spotted a heron, two kingfishers and a flock of cormorants", tags: ["nature"]),
        Target(
            id: "t-kernel", title: "Kernel upgrade checklist",
            content: "Reboot the servers one by one and check the watchdog logs", tags: ["ops", "work"]),
        Target(
            id: "t-wedding", title: "Wedding speech draft",
            content: "Thank the parents, tell the story about the canoe trip", tags: ["family"]),
        Target(
            id: "t-moving", title: "Moving apartment",
            content: "Book the van, cancel the internet contract, label every box", tags: ["home"]),
        Target(
            id: "t-conflicts", title: "Sync conflict resolution",
            content: "Last writer wins per field using hybrid logical clocks", tags: ["work", "design"]),
        Target(
            id: "t-offline", title: "Offline first architecture",
            content: "The phone keeps working in the subway without network", tags: ["design"]),
        Target(
            id: "t-puppy", title: "Puppy vaccination dates", content: "Rabies shot in March, booster after four weeks",
            tags: ["pets"]),
        Target(
            id: "t-chess", title: "Chess opening repertoire",
            content: "Sicilian defence for black, Queen's gambit for white", tags: ["games"]),
        Target(
            id: "t-resume", title: "Résumé for the café job", content: "Barista experience and latte art",
            tags: ["Jobs"]),
        Target(id: "k-sync", title: "동기화 오류 정리", content: "오프라인에서 작성한 메모가 동기화를 거치며 충돌이 났다", tags: ["개발", "회의"]),
        Target(id: "k-kimjang", title: "김장 준비물", content: "배추 스무 포기, 고춧가루, 젓갈, 마늘을 준비한다", tags: ["요리", "가족"]),
        Target(id: "k-jeju", title: "제주도 자전거 일주", content: "해안도로를 따라 사흘 동안 달린다", tags: ["여행"]),
        Target(id: "k-exam", title: "토익 시험 준비", content: "리스닝 파트를 매일 아침 연습한다", tags: ["공부"]),
        Target(id: "k-dentist", title: "치과 예약", content: "금요일 오후 세 시 스케일링", tags: ["건강"]),
        Target(id: "k-budget", title: "가계부 정리", content: "이번 달 식비와 교통비를 줄이기", tags: ["재정"]),
        Target(id: "k-reading", title: "독서 모임 발제", content: "데미안을 읽고 질문 다섯 개를 준비", tags: ["책"]),
        Target(id: "k-moving", title: "이사 체크리스트", content: "인터넷 해지, 전입신고, 도시가스 연결", tags: ["집"]),
        Target(id: "k-garden", title: "베란다 텃밭", content: "상추와 방울토마토 모종을 심었다", tags: ["정원"]),
        Target(id: "m-shortcuts", title: "iPhone용 단축어 만들기", content: "Shortcuts 앱으로 자동화 설정", tags: ["기술"]),
        Target(id: "m-server", title: "서버 마이그레이션 계획", content: "PostgreSQL 백업 후 replica 전환", tags: ["ops"]),
    ]

    /// Query, expected item, and the rank it must reach (1 = first).
    static let queries: [(query: String, id: String, rank: Int)] = [
        ("sourdough", "t-bread", 1), ("rye flour", "t-bread", 1), ("starter", "t-bread", 1),
        ("bicycle repair", "t-bike", 1), ("bicycle", "t-bike", 1), ("derailleur", "t-bike", 1),
        ("visa passport", "t-visa", 1), ("embassy", "t-visa", 1), ("revenue forecast", "t-forecast", 1),
        ("churn", "t-forecast", 1), ("heron kingfishers", "t-birds", 1), ("birdwatching", "t-birds", 1),
        ("kernel", "t-kernel", 1), ("watchdog logs", "t-kernel", 1), ("wedding speech", "t-wedding", 1),
        ("canoe", "t-wedding", 1), ("moving van", "t-moving", 1), ("sync conflict", "t-conflicts", 1),
        ("hybrid logical clocks", "t-conflicts", 1), ("sync", "t-conflicts", 3), ("offline first", "t-offline", 1),
        ("subway", "t-offline", 1), ("rabies", "t-puppy", 1), ("sicilian", "t-chess", 1),
        ("resume cafe", "t-resume", 1), ("RÉSUMÉ", "t-resume", 1), ("Café", "t-resume", 1),
        ("동기화", "k-sync", 1), ("오프라인", "k-sync", 1), ("충돌", "k-sync", 1), ("김장", "k-kimjang", 1),
        ("고춧가루", "k-kimjang", 1), ("제주도 자전거", "k-jeju", 1), ("해안도로", "k-jeju", 1),
        ("토익", "k-exam", 1), ("리스닝", "k-exam", 1), ("치과 예약", "k-dentist", 1), ("스케일링", "k-dentist", 1),
        ("가계부", "k-budget", 1), ("교통비", "k-budget", 1), ("데미안", "k-reading", 1), ("전입신고", "k-moving", 1),
        ("방울토마토", "k-garden", 1), ("iphone 단축어", "m-shortcuts", 1), ("postgresql replica", "m-server", 1),
        ("마이그레이션", "m-server", 1), ("자전거", "k-jeju", 3),
    ]

    /// Search-as-you-type: the last word is a prefix.
    static let prefixQueries: [(query: String, id: String)] = [
        ("sourd", "t-bread"), ("deraill", "t-bike"), ("bicycle rep", "t-bike"), ("kingf", "t-birds"),
        ("postgre", "m-server"), ("wedd", "t-wedding"), ("hybrid logi", "t-conflicts"), ("김", "k-kimjang"),
        ("iph", "m-shortcuts"), ("caf", "t-resume"),
    ]

    static let fillerEnglish = [
        "meeting", "notes", "weekly", "review", "project", "update", "ideas", "list", "draft", "call", "email",
        "report", "summary", "agenda", "reminder", "todo", "journal", "status", "follow", "team", "lunch", "coffee",
    ]
    static let fillerKorean = ["회의록", "주간", "보고서", "아이디어", "할일", "요약", "일정", "메모", "점심", "커피", "팀"]

    /// 24 targets and 200 fillers. Some fillers mention a target's words once in their content
    /// (decoys), so ranking has to weigh fields and frequencies.
    static func fill(_ store: Store) async throws {
        var random = SeededGenerator(seed: 224)
        func words(_ count: Int, _ pool: [String]) -> String {
            (0..<count).map { _ in pool[Int(random.next() % UInt64(pool.count))] }.joined(separator: " ")
        }
        let decoys = ["bicycle", "sync", "동기화를", "자전거", "offline", "kernel", "replica", "forecast"]
        var changes: [Change] = targets.map { target in
            .put(
                "notes", id: target.id,
                fields: [
                    "title": .string(target.title), "content": .string(target.content),
                    "tags": .array(target.tags.map(Value.string)),
                ])
        }
        for index in 0..<200 {
            let korean = index % 3 == 0
            let pool = korean ? fillerKorean : fillerEnglish
            var content = words(12 + index % 20, pool)
            if index % 10 == 0 { content += " " + decoys[(index / 10) % decoys.count] }
            changes.append(
                .put(
                    "notes", id: "f\(index)",
                    fields: [
                        "title": .string(words(3, pool)), "content": .string(content),
                        "tags": [.string(pool[index % pool.count])],
                    ]))
        }
        try await store.append(changes)
        // The same words in another collection never leak into "notes" searches.
        try await store.append(
            targets.prefix(5).map { .put("archive", id: "a-\($0.id)", fields: ["title": .string($0.title)]) })
    }

    static func ids(_ store: Store, _ query: SearchQuery) throws -> [String] {
        try store.search(query).map(\.item.id)
    }

    // MARK: Ranking

    @Test func knownTargetsRankFirstOrInTheTopThree() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            #expect(try store.count(in: "notes") == 224)
            #expect(Self.queries.count >= 30)
            var misses: [String] = []
            for (query, id, rank) in Self.queries {
                let found = try Self.ids(store, SearchQuery(query, collection: "notes", limit: 10))
                guard let position = found.firstIndex(of: id), position < rank else {
                    misses.append("\(query) → \(found.prefix(3)) (wanted \(id) within \(rank))")
                    continue
                }
            }
            #expect(misses.isEmpty, "\(misses.joined(separator: "; "))")
        }
    }

    @Test func theLastWordMatchesAsAPrefix() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            for (query, id) in Self.prefixQueries {
                let found = try Self.ids(store, SearchQuery(query, collection: "notes", limit: 5))
                #expect(found.first == id, "\(query) → \(found)")
            }
            // Only the last word is a prefix; a trailing space makes it a whole word.
            #expect(try Self.ids(store, SearchQuery("sourd", collection: "notes")).contains("t-bread"))
            #expect(try Self.ids(store, SearchQuery("sourd ", collection: "notes")).isEmpty)
            #expect(try Self.ids(store, SearchQuery("sourd bread", collection: "notes")).isEmpty)
        }
    }

    @Test func resultsAreOrderedAndPagedConsistently() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            let all = try store.search(SearchQuery("meeting", collection: "notes", limit: 30))
            #expect(all.count == 30)
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.score >= $1.score }, "best first")
            var paged: [String] = []
            for offset in stride(from: 0, to: 30, by: 7) {
                paged += try Self.ids(
                    store, SearchQuery("meeting", collection: "notes", limit: min(7, 30 - offset), offset: offset))
            }
            #expect(paged == all.map(\.item.id))
            #expect(try store.search(SearchQuery("meeting", collection: "notes", limit: 0)).isEmpty)
            #expect(try store.search(SearchQuery("", collection: "notes")).isEmpty, "no words and no tags: nothing")
            #expect(try store.search(SearchQuery("zzzunknown", collection: "notes")).isEmpty)
            // Every word must match.
            #expect(try Self.ids(store, SearchQuery("sourdough derailleur", collection: "notes")).isEmpty)
        }
    }

    @Test func collectionsAreSearchedApartOrTogether() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            #expect(try Self.ids(store, SearchQuery("sourdough", collection: "notes")) == ["t-bread"])
            #expect(try Self.ids(store, SearchQuery("sourdough", collection: "archive")) == ["a-t-bread"])
            let both = try store.search(SearchQuery("sourdough"))
            #expect(Set(both.map { "\($0.item.collection)/\($0.item.id)" }) == ["notes/t-bread", "archive/a-t-bread"])
            #expect(try store.search("birdwatching").map(\.item.collection).sorted() == ["archive", "notes"])
        }
    }

    // MARK: Tags

    @Test func tagFiltersNarrowResults() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["baking"])) == ["t-bread"])
            #expect(
                try Self.ids(store, SearchQuery("", collection: "notes", tags: ["BAKING"])) == ["t-bread"],
                "tags fold case")
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["jobs"])) == ["t-resume"])
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["가족"])) == ["k-kimjang"])
            #expect(
                Set(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["work"]))) == [
                    "t-forecast", "t-kernel", "t-conflicts",
                ])
            #expect(
                try Self.ids(store, SearchQuery("", collection: "notes", tags: ["work", "design"])) == ["t-conflicts"],
                "all tags must match")
            #expect(try Self.ids(store, SearchQuery("kernel", collection: "notes", tags: ["ops"])) == ["t-kernel"])
            #expect(try Self.ids(store, SearchQuery("sourdough", collection: "notes", tags: ["bike"])).isEmpty)
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["nonexistent"])).isEmpty)
            // A tag filter drops the decoys that mention the word without the tag.
            let sync = try Self.ids(store, SearchQuery("sync", collection: "notes", tags: ["design"], limit: 50))
            #expect(sync == ["t-conflicts"])
            // Tags are searchable words too.
            #expect(try Self.ids(store, SearchQuery("baking", collection: "notes")).first == "t-bread")
        }
    }

    // MARK: Deletes and updates

    @Test func aDeletedItemIsNeverReturned() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            try await store.delete("notes", id: "t-bread")
            try await store.delete("notes", id: "k-sync")
            for (query, _, _) in Self.queries + Self.prefixQueries.map({ ($0.query, $0.id, 1) }) {
                let found = try Self.ids(store, SearchQuery(query, collection: "notes", limit: 500))
                #expect(!found.contains("t-bread") && !found.contains("k-sync"), "\(query)")
            }
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["baking"])).isEmpty)
            #expect(
                try Self.ids(store, SearchQuery("동기화", collection: "notes", limit: 500)).allSatisfy {
                    $0.hasPrefix("f")
                }, "only decoys left")
            // A later write brings it back with its new content only.
            try await store.patch("notes", id: "t-bread", fields: ["title": "Focaccia"])
            #expect(try Self.ids(store, SearchQuery("focaccia", collection: "notes")) == ["t-bread"])
            #expect(try Self.ids(store, SearchQuery("sourdough", collection: "notes")).isEmpty)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func updatesReindexTheItem() async throws {
        try await withTemporaryStore { store in
            try await Self.fill(store)
            try await store.patch("notes", id: "t-bike", fields: ["title": "Scooter maintenance"])
            #expect(!(try Self.ids(store, SearchQuery("bicycle", collection: "notes", limit: 500)).contains("t-bike")))
            #expect(try Self.ids(store, SearchQuery("scooter", collection: "notes")) == ["t-bike"])
            #expect(
                try Self.ids(store, SearchQuery("derailleur", collection: "notes")) == ["t-bike"],
                "the content was kept")

            try await store.put(
                "notes", id: "t-kernel", fields: ["title": "Firmware notes", "content": "Flash the router"])
            #expect(try Self.ids(store, SearchQuery("watchdog", collection: "notes")).isEmpty)
            #expect(
                try Self.ids(store, SearchQuery("kernel", collection: "notes", limit: 500)).allSatisfy {
                    $0.hasPrefix("f")
                })
            #expect(try Self.ids(store, SearchQuery("router", collection: "notes")) == ["t-kernel"])
            #expect(
                try Self.ids(store, SearchQuery("", collection: "notes", tags: ["ops"])) == ["m-server"],
                "the put dropped its tags")

            try await store.patch("notes", id: "k-exam", fields: ["tags": ["시험", "영어"]])
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["영어"])) == ["k-exam"])
            #expect(try Self.ids(store, SearchQuery("", collection: "notes", tags: ["공부"])).isEmpty)
            #expect(try Self.ids(store, SearchQuery("토익", collection: "notes")) == ["k-exam"])

            // A field outside the searchable ones changes nothing in the index.
            let before = try Self.ids(store, SearchQuery("meeting", collection: "notes", limit: 50))
            try await store.patch("notes", id: "f1", fields: ["priority": 3])
            #expect(try Self.ids(store, SearchQuery("meeting", collection: "notes", limit: 50)) == before)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func koreanWordsMatchInsideLongerWords() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "a", fields: ["content": "메모를 동기화를 끝냈다"]),
                .put("notes", id: "b", fields: ["content": "오프라인에서 작업"]),
                .put("notes", id: "c", fields: ["content": "동기 부여"]),
            ])
            #expect(try Self.ids(store, SearchQuery("동기화", collection: "notes")) == ["a"])
            #expect(try Self.ids(store, SearchQuery("오프라인", collection: "notes")) == ["b"])
            #expect(Set(try Self.ids(store, SearchQuery("동기", collection: "notes"))) == ["a", "c"])
            #expect(try Self.ids(store, SearchQuery("동기화를", collection: "notes")) == ["a"])
            #expect(try Self.ids(store, SearchQuery("오프라인 작업", collection: "notes")) == ["b"])
        }
    }
}
