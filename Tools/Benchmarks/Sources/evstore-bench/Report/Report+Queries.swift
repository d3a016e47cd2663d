extension Report.Aim {
    /// Top-50 queries: p50 and p99 ≤ 0.5× SQLite's with the same indexes.
    static let query = Report.Aim.sqliteAtMost(0.5)
    /// Keyset paging: ≥ 2× SQLite's rows/s.
    static let paging = Report.Aim.sqliteAtLeast(2)
    /// One declared index slows the batched append by ≤ 10%.
    static let indexCost = Report.Aim.atMost(10, text: "10%")
    /// A live query's new answer ≤ 5 ms after the commit returns, p99.
    static let liveLatency = Report.Aim.atMost(5, text: "5 ms")
    /// No live query misses a change or yields an unchanged answer.
    static let zero = Report.Aim.atMost(0, text: "0")
}

extension Report {
    /// The rows of scenarios 11–13 (`queries`, `livequery`) in the main table.
    static let querySections: [(String, [Row])] = [
        (
            "11. Queries, tasks collection of N items, top 50, whole rows (3 declared indexes; SQLite: same indexes on columns, rows read into structs); typed: EventStore's TypedCollection models (SQLite: its same rows)",
            [
                queryRows(""), queryRows("typed, ", key: ".typed"),
                [Row("  peak RSS (MiB)", "rss.queries.idx3", .memory)],
            ].flatMap { $0 }
        ),
        (
            "12. Batched append of the tasks, 1,000 puts/txn, durable, no full-text index (events/s)",
            [
                Row("  no declared index", "tasks.append.idx0", .rate),
                Row("  no declared index, typed models (TypedCollection.put)", "tasks.append.typed.idx0", .rate),
                Row("  one index (done, due)", "tasks.append.idx1", .rate),
                Row("  three indexes (the store of 11)", "tasks.append.idx3", .rate),
                Row("  slowdown, one index", "tasks.slowdown.idx1", .percent, aim: .indexCost),
                Row("  slowdown, three indexes", "tasks.slowdown.idx3", .percent),
                Row("  bytes written per event, no index (KiB)", "written.tasks.idx0", .kibibytes),
                Row("  bytes written per event, one index (KiB)", "written.tasks.idx1", .kibibytes),
                Row("  slowest commit, no index (ms)", "tasks.slowest.idx0", .milliseconds),
                Row("  slowest commit, one index (ms)", "tasks.slowest.idx1", .milliseconds),
                Row("  slowest commit, three indexes (ms)", "tasks.slowest.idx3", .milliseconds),
            ]
        ),
        (
            "13. Live queries (EventStore), folder == X ORDER BY due DESC LIMIT 50, durable",
            [
                Row("  one observer: commit return → new answer, p50 (ms)", "live.one.p50", .milliseconds),
                Row(
                    "  one observer: commit return → new answer, p99 (ms)", "live.one.p99", .milliseconds,
                    aim: .liveLatency),
                Row("  one observer: slowest of the commits (ms)", "live.one.max", .milliseconds),
                Row("  one observer: answers before append returned", "live.one.early", .count),
                Row("  one observer: durable append, p50 (ms)", "live.one.append.p50", .milliseconds),
                Row("  32 writers, no live query: commits/s", "live.many.baseline", .rate),
                Row("  100 observers, 32 writers: commits", "live.many.commits", .count),
                Row("  100 observers, 32 writers: commits/s", "live.many.rate", .rate),
                Row("  100 observers, 32 writers: answers yielded", "live.many.yields", .count),
                Row("  100 observers, 32 writers: redundant answers", "live.many.redundant", .count, aim: .zero),
                Row("  100 observers, 32 writers: missed final answers", "live.many.misses", .count, aim: .zero),
                Row(
                    "  100 observers, 32 writers: catch-up after the last commit (ms)", "live.many.catchup",
                    .milliseconds),
                Row("  peak RSS (MiB)", "rss.livequery", .memory),
            ]
        ),
    ]

    /// The rows of scenario 11's queries and paging, titled with `prefix`, their figures' keys
    /// with `key` after the query's name.
    static func queryRows(_ prefix: String, key: String = "") -> [Row] {
        let queries = [
            ("folder == X ORDER BY due DESC", "folder"), ("done == false ORDER BY due", "open"),
            ("done == false AND due >= T ORDER BY due", "openAfter"),
        ]
        return queries.flatMap { text, name in
            ["p50", "p99"].map {
                Row("  \(prefix)\(text): \($0) (ms)", "query.\(name)\(key).\($0)", .milliseconds, aim: .query)
            }
        } + [Row("  \(prefix)keyset paging by due, 100 rows/page (rows/s)", "query.paging\(key)", .rate, aim: .paging)]
    }

    /// The cross-check of scenario 11: both engines' answer checksums (the run fails when they
    /// differ, so printing them means they agreed).
    func printQueryNotes(_ results: Results) {
        guard let answers = results.notes[.eventstore]?["queries.durable.answers"],
            results.notes[.sqlite]?["queries.durable.answers"] == answers
        else { return }
        let paging = results.notes[.eventstore]?["queries.durable.paging"] ?? "?"
        let rows = ["folder", "open", "openAfter"].compactMap { results["query.\($0).rows", .eventstore] }
        print(
            "11. answers: identical ids in identical order on both engines (checksum \(answers) over every top-50 answer, "
                + "\(rows.map { $0.formatted(decimals: 1) }.joined(separator: " / ")) rows on average; paging \(paging))"
        )
    }
}
