import Foundation

/// Prints the run's header, the table of figures and ratios, and the scaling table, as text or
/// as JSON lines.
struct Report {
    let options: Options
    let workdir: String

    /// How a figure reads.
    enum Kind {
        /// Per second: higher is better.
        case rate
        /// Milliseconds: lower is better.
        case milliseconds
        /// Seconds: lower is better.
        case seconds
        /// MiB: lower is better.
        case mebibytes
        /// KiB: lower is better.
        case kibibytes
        /// A multiplier (×).
        case times
        /// A plain count.
        case count
        /// Peak RSS in MiB, with peak anonymous memory.
        case memory
        /// Percent (no ratio between engines).
        case percent
    }

    struct Row {
        var title: String
        var key: String
        var kind: Kind
        var aim: Aim?

        init(_ title: String, _ key: String, _ kind: Kind, aim: Aim? = nil) {
            self.title = title
            self.key = key
            self.kind = kind
            self.aim = aim
        }
    }

    static let sections: [(String, [Row])] = [
        (
            "1. Batched append, 1,000 events/txn, log + items + search index (events/s)",
            [
                Row("  durable (SQLite synchronous=FULL)", "append.durable", .rate, aim: .append),
                Row("  relaxed (SQLite NORMAL, LMDB NOMETASYNC)", "append.relaxed", .rate),
                Row("  durable, log + items only (no search index)", "append.nosearch", .rate),
                Row("  bytes written per event, durable (KiB)", "written.append", .kibibytes, aim: .bytesPerEvent),
                Row("  bytes written per event, no search index (KiB)", "written.append.nosearch", .kibibytes),
            ]
        ),
        (
            "2. One commit per event, full pipeline (events/s)",
            [
                Row("  durable", "single.durable", .rate, aim: .singleCommit),
                Row("  relaxed", "single.relaxed", .rate),
                Row("  durable, log + items only (no search index)", "single.nosearch", .rate),
                Row("  bytes written per commit, durable (KiB)", "written.single", .kibibytes),
                Row("  bytes written per commit, no search index (KiB)", "written.single.nosearch", .kibibytes),
            ]
        ),
        (
            "3. 32 concurrent writers, one event per append, durable",
            [
                Row("  events/s", "concurrent", .rate),
                Row("  bytes written per event (KiB)", "written.concurrent", .kibibytes),
                Row("  speed-up over one writer (3 / 2 durable)", "speedup", .times, aim: .speedup),
            ]
        ),
        (
            "4. Search, top 20 (SQLite: FTS5 ORDER BY rank)",
            [
                Row("  1–2 whole words: p50 (ms)", "search.exact.p50", .milliseconds, aim: .searchP50),
                Row("  1–2 whole words: p99 (ms)", "search.exact.p99", .milliseconds, aim: .searchP99),
                Row("  1–2 whole words: queries/s", "search.exact.qps", .rate),
                Row("  1–2 whole words: queries with hits", "search.exact.hits", .count),
                Row("  prefix (+ word): p50 (ms)", "search.prefix.p50", .milliseconds, aim: .searchP50),
                Row("  prefix (+ word): p99 (ms)", "search.prefix.p99", .milliseconds, aim: .searchP99),
                Row("  prefix (+ word): queries with hits", "search.prefix.hits", .count),
                Row(
                    "  1–2 words, page of 20 with snippets: p50 (ms)", "search.snippets.p50", .milliseconds,
                    aim: .snippetsP50),
                Row("  1–2 words, page of 20 with snippets: p99 (ms)", "search.snippets.p99", .milliseconds),
                Row("  snippets per query (matched fields)", "search.snippets.fields", .count),
                Row("  1–2 words, a typo in one (automatic tolerance): p50 (ms)", "search.typos.p50", .milliseconds),
                Row(
                    "  1–2 words, a typo in one (automatic tolerance): p99 (ms)", "search.typos.p99", .milliseconds,
                    aim: .typosP99),
                Row("  1–2 words, a typo in one: queries with hits", "search.typos.hits", .count),
                Row("  phrase of 2 words (\"a b\"): p50 (ms)", "search.phrases.p50", .milliseconds, aim: .phrasesP50),
                Row("  phrase of 2 words (\"a b\"): p99 (ms)", "search.phrases.p99", .milliseconds, aim: .phrasesP99),
                Row("  phrase: queries with hits", "search.phrases.hits", .count),
                Row("  phrase: documents matched, all pages", "search.phrases.matches", .count),
                Row("  phrase: digest of (query, id) matched (equal: the same)", "search.phrases.digest", .count),
                Row("  1–2 words, tag facets over every hit: p50 (ms)", "search.facets.p50", .milliseconds),
                Row("  1–2 words, tag facets over every hit: p99 (ms)", "search.facets.p99", .milliseconds),
            ]
        ),
        (
            "5. Rebuild items + index from the log (events/s; LMDB: items only)",
            [
                Row("  rebuild", "rebuild", .rate, aim: .rebuild),
                Row("  bytes written per event (KiB)", "written.rebuild", .kibibytes),
            ]
        ),
        (
            "6. Reads",
            [
                Row("  item point reads, one read txn each (reads/s)", "reads.point", .rate, aim: .pointReads),
                Row("  item point reads, one txn for all (reads/s)", "reads.batch", .rate),
                Row("  full log scan with decoding (events/s)", "reads.scan", .rate),
            ]
        ),
        (
            "7. Size on disk after 1 (MiB; SQLite: db + WAL after checkpoint)",
            [
                Row("  store", "size", .mebibytes, aim: .size),
                Row("  compacted copy (LMDB: mdb_env_copy2 compact)", "size.compacted", .mebibytes),
                Row("  search index with positions (FTS5: its tables)", "size.search", .mebibytes, aim: .searchSize),
            ]
        ),
        (
            "8. Peak RSS per scenario, MiB (anonymous memory in parentheses)",
            [
                Row("  1. append, durable", "rss.append.durable", .memory),
                Row("  1. append, relaxed", "rss.append.relaxed", .memory),
                Row("  2. one commit per event, durable", "rss.single.durable", .memory),
                Row("  3. 32 concurrent writers", "rss.concurrent", .memory),
                Row("  4. search", "rss.search", .memory),
                Row("  5. rebuild", "rss.rebuild", .memory),
                Row("  6. reads", "rss.reads", .memory),
            ]
        ),
    ]

    static let header = ["Figure", "EventStore", "SQLite", "raw LMDB", "ES/SQLite", "ES/LMDB", "Aim (issue)"]

    // MARK: Main table

    func printMain(_ results: Results) {
        if options.format == .jsonl {
            emitAll(results, events: options.events)
            return
        }
        printWorkload(results, events: options.events)
        var table = TextTable(header: Report.header)
        for (title, rows) in Report.sections + Report.querySections {
            let present = rows.filter { results.values[$0.key] != nil || results.values[$0.key + ".peak"] != nil }
            guard !present.isEmpty else { continue }
            table.section(title)
            for row in present { table.add(cells(row, results)) }
        }
        print(table.render())
        printBreakdown(results)
        printQueryNotes(results)
        print("")
        fflush(nil)
    }

    private func printWorkload(_ results: Results, events: Int) {
        print("N = \(Format.grouped(Double(events))) events over \(Format.grouped(Double(max(1, events / 4)))) items")
        let checksums = EngineName.allCases.compactMap { engine in
            results.notes[engine]?["append.durable.checksum"].map { (engine, $0) }
        }
        if let mix = results.notes[.eventstore]?["append.durable.mix"] { print("event mix: \(mix)") }
        if results.values["tasks.append.idx0"] != nil || results.values["live.one.p50"] != nil {
            print(TaskWorkload.summary(count: events))
        }
        if !checksums.isEmpty {
            let identical = Set(checksums.map(\.1)).count == 1
            print(
                "workload checksum: " + checksums.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")
                    + (identical ? " (identical)" : " (DIFFERENT!)"))
        }
        print("")
    }

    /// The text of `row`'s figure under `key` for `engine`: "—" when it is missing; a memory
    /// figure is its peak with the anonymous peak in parentheses (keys `KEY.peak`, `KEY.anon`).
    static func text(_ results: Results, _ key: String, _ kind: Kind, _ engine: EngineName = .eventstore) -> String {
        if kind == .memory {
            guard let peak = results[key + ".peak", engine] else { return "—" }
            let anon = results[key + ".anon", engine] ?? 0
            return "\(peak.formatted(decimals: 0)) (\(anon.formatted(decimals: 0)))"
        }
        guard let value = results[key, engine] else { return "—" }
        switch kind {
        case .rate, .count: return Format.grouped(value)
        case .milliseconds, .seconds, .kibibytes: return Format.decimal(value)
        case .mebibytes: return value.formatted(decimals: 1)
        case .times: return Format.ratio(value)
        case .percent: return value.formatted(decimals: 1) + "%"
        case .memory: return ""
        }
    }

    func cells(_ row: Row, _ results: Results) -> [String] {
        func value(_ engine: EngineName) -> String { Report.text(results, row.key, row.kind, engine) }
        let key = row.kind == .memory ? row.key + ".peak" : row.key
        let showRatio = row.kind != .count && row.kind != .times && row.kind != .percent
        let es = results[key, .eventstore]
        let bySQLite = showRatio ? ratio(es, results[key, .sqlite]).map(Format.ratio) ?? "—" : ""
        let byLMDB = showRatio ? ratio(es, results[key, .lmdb]).map(Format.ratio) ?? "—" : ""
        return [
            row.title, value(.eventstore), value(.sqlite), value(.lmdb), bySQLite, byLMDB,
            row.aim?.check(results, row.key) ?? "",
        ]
    }

    /// Where the bytes of each store go.
    private func printBreakdown(_ results: Results) {
        for engine in [EngineName.eventstore, .sqlite] {
            let parts = results.values.compactMap { key, values -> (String, Double)? in
                guard key.hasPrefix("size.db."), let value = values[engine] else { return nil }
                return (String(key.dropFirst("size.db.".count)), value)
            }.sorted { $0.1 > $1.1 }
            guard !parts.isEmpty else { continue }
            let name = engine == .eventstore ? "EventStore" : "SQLite"
            print(
                "\(name) size by table (MiB): "
                    + parts.map { "\($0.0) \($0.1.formatted(decimals: 1))" }.joined(separator: ", "))
        }
    }

    // MARK: Scaling

    static let scalingRows: [Row] = [
        Row("  1. append durable (events/s)", "append.durable", .rate, aim: .append),
        Row("  1. bytes written per event (KiB)", "written.append", .kibibytes, aim: .bytesPerEvent),
        Row("  4. search 1–2 words p50 (ms)", "search.exact.p50", .milliseconds, aim: .searchP50),
        Row("  4. search 1–2 words p99 (ms)", "search.exact.p99", .milliseconds, aim: .searchP99),
        Row("  4. search prefix p50 (ms)", "search.prefix.p50", .milliseconds, aim: .searchP50),
        Row("  4. search prefix p99 (ms)", "search.prefix.p99", .milliseconds, aim: .searchP99),
        Row("  4. search with a typo p99 (ms)", "search.typos.p99", .milliseconds, aim: .typosP99),
        Row("  4. phrase p50 (ms)", "search.phrases.p50", .milliseconds, aim: .phrasesP50),
        Row("  4. phrase p99 (ms)", "search.phrases.p99", .milliseconds, aim: .phrasesP99),
        Row("  5. rebuild (events/s)", "rebuild", .rate, aim: .rebuild),
        Row("  5. bytes written per event (KiB)", "written.rebuild", .kibibytes),
        Row("  peak RSS, append (MiB)", "rss.append.durable", .memory),
        Row("  peak RSS, rebuild (MiB)", "rss.rebuild", .memory),
    ]

    func printScaling(_ runs: [(Int, Results)]) {
        if options.format == .jsonl {
            for (events, results) in runs { emitAll(results, events: events, type: "scaling") }
            return
        }
        print("9. Scaling: scenarios 1, 4 and 5 at several sizes (N events over N/4 items)")
        var table = TextTable(header: Report.header)
        for (events, results) in runs {
            let checksums = Set(EngineName.allCases.compactMap { results.notes[$0]?["append.durable.checksum"] })
            table.section(
                "N = \(Format.grouped(Double(events)))"
                    + (checksums.count == 1 ? " (checksum \(checksums.first!))" : ""))
            for row in Report.scalingRows { table.add(cells(row, results)) }
        }
        print(table.render())
        print("")
        fflush(nil)
    }

    // MARK: JSON lines

    /// Every figure and note as one JSON object each, of type `type`.
    func emitAll(_ results: Results, events: Int, type: String = "figure") {
        for key in results.values.keys.sorted() {
            for (engine, value) in results.values[key]!.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                emit([
                    "type": type, "events": String(events), "figure": key,
                    "engine": engine.rawValue, "value": String(value),
                ])
            }
        }
        for (engine, notes) in results.notes {
            for (key, note) in notes.sorted(by: { $0.key < $1.key }) {
                emit(["type": "note", "events": String(events), "engine": engine.rawValue, "key": key, "value": note])
            }
        }
    }

    func emit(_ object: [String: String]) {
        var fields = object.mapValues { $0 as Any }
        // Notes stay text: a checksum such as 0x1f… would otherwise parse as a hexadecimal number.
        for key in object["type"] == "note" ? ["events"] : ["events", "value"] {
            if let text = object[key], let number = Double(text) { fields[key] = number }
        }
        if let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
            fflush(nil)
        }
    }
}

/// `lhs / rhs`, when both exist and `rhs` is not zero.
func ratio(_ lhs: Double?, _ rhs: Double?) -> Double? {
    guard let lhs, let rhs, rhs != 0 else { return nil }
    return lhs / rhs
}
