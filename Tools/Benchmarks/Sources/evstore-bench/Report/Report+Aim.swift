/// The aims of the issues, checked against the figures ("met" or "MISSED" in the last column).
extension Report {
    /// A goal from the issue, checked against the figures.
    indirect enum Aim: Sendable {
        case sqliteAtLeast(Double)
        case sqliteAtMost(Double)
        case lmdbAtLeast(Double)
        case lmdbAtMost(Double)
        case valueAtLeast(Double)
        /// EventStore's figure at least `value`, shown as `text`.
        case atLeast(Double, text: String)
        /// EventStore's figure at most `value`, shown as `text`.
        case atMost(Double, text: String)
        /// EventStore's figure under another key (`figure`) at most `value`, shown as `text`.
        case figureAtMost(String, Double, text: String)
        /// EventStore's figure at most `times` its figure under another key, shown as `text`.
        case timesFigureAtMost(String, Double, text: String)
        /// Met only when both are.
        case both(Aim, Aim)

        func check(_ results: Results, _ key: String) -> String {
            let (text, met) = evaluate(results, key)
            return text + (met.map { $0 ? " met" : " MISSED" } ?? "")
        }

        /// The aim as text, and whether it is met (`nil` when a figure is missing).
        func evaluate(_ results: Results, _ key: String) -> (String, Bool?) {
            let es = results[key, .eventstore]
            switch self {
            case .sqliteAtLeast(let goal):
                return ("≥ \(Format.ratio(goal)) SQLite", ratio(es, results[key, .sqlite]).map { $0 >= goal })
            case .sqliteAtMost(let goal):
                return ("≤ \(Format.ratio(goal)) SQLite", ratio(es, results[key, .sqlite]).map { $0 <= goal })
            case .lmdbAtLeast(let goal):
                return ("≥ \(Format.ratio(goal)) LMDB", ratio(es, results[key, .lmdb]).map { $0 >= goal })
            case .lmdbAtMost(let goal):
                return ("≤ \(Format.ratio(goal)) LMDB", ratio(es, results[key, .lmdb]).map { $0 <= goal })
            case .valueAtLeast(let goal):
                return ("≥ \(Format.ratio(goal))", es.map { $0 >= goal })
            case .atLeast(let goal, let text):
                return ("≥ \(text)", es.map { $0 >= goal })
            case .atMost(let goal, let text):
                return ("≤ \(text)", es.map { $0 <= goal })
            case .figureAtMost(let figure, let goal, let text):
                return ("≤ \(text)", results[figure, .eventstore].map { $0 <= goal })
            case .timesFigureAtMost(let figure, let goal, let text):
                return ("≤ \(text)", ratio(es, results[figure, .eventstore]).map { $0 <= goal })
            case .both(let first, let second):
                let (firstText, firstMet) = first.evaluate(results, key)
                let (secondText, secondMet) = second.evaluate(results, key)
                let met: Bool? = if let firstMet, let secondMet { firstMet && secondMet } else { nil }
                return ("\(firstText), \(secondText)", met)
            }
        }

        /// Batched full-pipeline append: ≥ 3× SQLite+FTS5 and ≥ 0.4× raw LMDB.
        static let append = Aim.both(.sqliteAtLeast(3), .lmdbAtLeast(0.4))
        /// Bytes written per event: ≤ 2× raw LMDB's.
        static let bytesPerEvent = Aim.lmdbAtMost(2)
        /// One durable commit per event: ≥ 0.9× raw LMDB and ≥ 1.0× SQLite (FULL).
        static let singleCommit = Aim.both(.lmdbAtLeast(0.9), .sqliteAtLeast(1))
        /// 32 concurrent writers: ≥ 15× the single-writer rate.
        static let speedup = Aim.valueAtLeast(15)
        /// Search: p50 ≤ 0.2× and p99 ≤ 0.33× FTS5.
        static let searchP50 = Aim.sqliteAtMost(0.2)
        static let searchP99 = Aim.sqliteAtMost(0.33)
        /// A page of 20 results with snippets: p50 ≤ 0.3× FTS5's snippet() query (issue 15).
        static let snippetsP50 = Aim.sqliteAtMost(0.3)
        /// Phrase queries: p50 ≤ 0.3× and p99 ≤ 0.5× FTS5's phrase queries (issue 15).
        static let phrasesP50 = Aim.sqliteAtMost(0.3)
        static let phrasesP99 = Aim.sqliteAtMost(0.5)
        /// The search index with positions: ≤ 1.0× FTS5's tables (issue 15).
        static let searchSize = Aim.sqliteAtMost(1.0)
        /// Queries with a typo: p99 ≤ 2× the p99 of the same queries without (issue 15).
        static let typosP99 = Aim.timesFigureAtMost("search.exact.p99", 2, text: "2× without typos")
        /// Rebuild: ≥ 1.5× SQLite.
        static let rebuild = Aim.sqliteAtLeast(1.5)
        /// Point reads: ≥ 5× SQLite.
        static let pointReads = Aim.sqliteAtLeast(5)
        /// Store size: ≤ 1.0× SQLite+FTS5 (the live file).
        static let size = Aim.sqliteAtMost(1)
    }
}
