/// The questions of the `queries` scenario and how they are timed, shared by both engines so
/// that each answers the same queries in the same order, timed the same way.
///
/// Three sets of top-50 queries (`folder == X ORDER BY due DESC`, `done == false ORDER BY due`,
/// `done == false AND due >= T ORDER BY due`), each with a warm-up pass over its first 100
/// queries and then every query timed on its own read transaction; then keyset paging through
/// the whole collection by `due`, 100 rows a page. The ids of every answer, in order, go into
/// one checksum per engine (outside the clock): the report fails when the engines disagree.
struct QuerySuite {
    /// Rows per top-N query.
    static let limit = 50
    /// Rows per page of the keyset paging.
    static let pageSize = 100
    /// The declared indexes of the tasks store, as field lists: (folder, due), (done, due) and
    /// (due) for paging. The store with one index gets the second.
    static let indexes = [["folder", "due"], ["done", "due"], ["due"]]

    /// The index fields a tasks store with `count` declared indexes gets.
    static func indexes(_ count: Int) -> [[String]] {
        count == 1 ? [indexes[1]] : Array(indexes.prefix(count))
    }

    let folders: [String]
    let thresholds: [Int64]
    /// How often the query without a parameter (`done == false ORDER BY due`) runs.
    let repeats: Int

    init(workload: TaskWorkload, count: Int) {
        folders = workload.folderQueries(count)
        thresholds = workload.dueThresholds(count)
        repeats = count
    }

    /// Runs `query(index)` for `count` queries: a warm-up over the first 100, then each timed.
    /// Writes `query.NAME.p50`, `.p99` (ms) and `.qps`, and hashes each answer's ids into
    /// `answers`.
    static func time<Answer>(
        _ name: String, count: Int, into result: inout ChildResult, answers: inout FNV1a,
        query: (Int) throws -> Answer, ids: (Answer) -> [String]
    ) throws {
        for index in 0..<min(count, 100) { _ = try query(index) }
        var latencies = LatencySamples()
        var rows = 0
        for index in 0..<count {
            let start = monotonicNanoseconds()
            let answer = try query(index)
            latencies.record(monotonicNanoseconds() - start)
            let answerIDs = ids(answer)
            rows += answerIDs.count
            answers.add(answerIDs.count)
            for id in answerIDs { answers.add(id) }
        }
        result.figures["query.\(name).p50"] = latencies.percentile(50)
        result.figures["query.\(name).p99"] = latencies.percentile(99)
        result.figures["query.\(name).qps"] = Double(count) / max(latencies.totalSeconds, 1e-9)
        result.figures["query.\(name).rows"] = Double(rows) / Double(max(count, 1))
    }

    /// Pages through the collection with `page(cursor)` until it returns no cursor; only the
    /// page reads are timed. Writes `query.paging` (rows/s) and the ids in order as the note
    /// `paging`; fails unless every one of `expected` rows came back exactly once.
    static func page<Cursor>(
        expected: Int, into result: inout ChildResult, name: String = "query.paging",
        _ page: (Cursor?) throws -> (ids: [String], next: Cursor?)
    ) throws {
        var watch = Stopwatch()
        var cursor: Cursor?
        var checksum = FNV1a()
        var rows = 0
        var pages = 0
        repeat {
            let (ids, next) = try watch.measure { try page(cursor) }
            for id in ids { checksum.add(id) }
            rows += ids.count
            pages += 1
            cursor = next
        } while cursor != nil
        guard rows == expected else { throw BenchError("keyset paging returned \(rows) rows, expected \(expected)") }
        result.figures[name] = watch.rate(rows)
        result.figures[name + ".pages"] = Double(pages)
        result.notes[String(name.dropFirst("query.".count))] = checksum.hex
    }
}
