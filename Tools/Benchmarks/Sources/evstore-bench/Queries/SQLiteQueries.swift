import Foundation
import GRDB

/// The `queries` scenario on SQLite through GRDB: the tasks in a table with real columns, as a
/// GRDB application would keep them, next to the same event log as scenario 1, with the same
/// declared indexes as EventStore (0, 1 or 3), durable (`synchronous=FULL`):
///
/// ```sql
/// events(…)  INDEX events_by_item(item, seq)                   -- as in scenario 1
/// tasks(pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, folder TEXT NOT NULL,
///       due INTEGER NOT NULL, done INTEGER NOT NULL, title TEXT NOT NULL, version INTEGER NOT NULL)
/// INDEX tasks_by_folder_due(folder, due), tasks_by_done_due(done, due), tasks_by_due(due)
/// ```
///
/// Queries fetch every column into a ``TaskRow``; paging is keyset on `due`, which is unique
/// in the workload, so `WHERE due > ? ORDER BY due LIMIT 100` is a complete keyset.
struct SQLiteQueries {
    let context: BenchContext

    /// A task as the application reads it back.
    struct TaskRow {
        var id: String
        var folder: String
        var due: Int64
        var done: Bool
        var title: String

        init(_ row: Row) {
            id = row[0]
            folder = row[1]
            due = row[2]
            done = row[3]
            title = row[4]
        }
    }

    static let columns = "id, folder, due, done, title"

    func create(_ path: String, indexes: Int) throws -> DatabasePool {
        context.removeStore(path)
        let pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        try pool.write { db in
            try db.execute(
                sql: SQLiteEngine.eventLogSQL + """
                    CREATE TABLE tasks(
                        pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, folder TEXT NOT NULL, due INTEGER NOT NULL,
                        done INTEGER NOT NULL, title TEXT NOT NULL, version INTEGER NOT NULL);
                    """)
            for fields in QuerySuite.indexes(indexes) {
                try db.execute(
                    sql:
                        "CREATE INDEX tasks_by_\(fields.joined(separator: "_")) ON tasks(\(fields.joined(separator: ", ")))"
                )
            }
        }
        return pool
    }

    func run(indexes: Int, queries: Int) throws -> ChildResult {
        let workload = context.taskWorkload
        let tasks = workload.tasks()
        let path = "\(context.directory)/tasks-sqlite-idx\(indexes).sqlite"
        let pool = try create(path, indexes: indexes)
        defer { try? pool.close() }
        var result = ChildResult()
        var watch = Stopwatch()
        var start = 0
        while start < tasks.count {
            let batch = tasks[start..<min(start + TaskWorkload.batch, tasks.count)]
            let payloads = batch.map {
                Data("\($0.folder)\u{1F}\($0.due)\u{1F}\($0.done ? 1 : 0)\u{1F}\($0.title)".utf8)
            }
            try watch.measure {
                try pool.write { db in
                    let insertEvent = try db.cachedStatement(
                        sql:
                            "INSERT INTO events(origin, origin_seq, stamp, item, op, payload) VALUES (?, ?, ?, ?, ?, ?)"
                    )
                    let upsert = try db.cachedStatement(
                        sql: """
                            INSERT INTO tasks(id, folder, due, done, title, version) VALUES (?, ?, ?, ?, ?, ?)
                            ON CONFLICT(id) DO UPDATE SET folder = excluded.folder, due = excluded.due,
                                done = excluded.done, title = excluded.title, version = excluded.version
                            """)
                    for (offset, task) in batch.enumerated() {
                        let sequence = start + offset + 1
                        try insertEvent.execute(
                            arguments: [
                                SQLiteEngine.origin, sequence, sequence, task.id, Int(Operation.put.rawValue),
                                payloads[offset],
                            ])
                        try upsert.execute(arguments: [task.id, task.folder, task.due, task.done, task.title, sequence])
                    }
                }
            }
            start += batch.count
        }
        result.figures["tasks.append.idx\(indexes)"] = watch.rate(tasks.count)
        result.figures["tasks.slowest.idx\(indexes)"] = watch.slowestMilliseconds
        // Its rows are inserted from structs already: its typed rate is this one.
        if indexes == 0 { result.figures["tasks.append.typed.idx0"] = result.figures["tasks.append.idx0"] }
        guard indexes == QuerySuite.indexes.count else { return result }

        let suite = QuerySuite(workload: workload, count: queries)
        let limit = QuerySuite.limit
        let columns = SQLiteQueries.columns
        func fetch(_ sql: String, _ arguments: StatementArguments) throws -> [TaskRow] {
            try pool.read { db in
                let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
                var answer: [TaskRow] = []
                while let row = try rows.next() { answer.append(TaskRow(row)) }
                return answer
            }
        }
        var answers = FNV1a()
        let ids: ([TaskRow]) -> [String] = { $0.map(\.id) }
        let byFolder = "SELECT \(columns) FROM tasks WHERE folder = ? ORDER BY due DESC LIMIT \(limit)"
        try QuerySuite.time(
            "folder", count: suite.folders.count, into: &result, answers: &answers,
            query: { try fetch(byFolder, [suite.folders[$0]]) }, ids: ids)
        let open = "SELECT \(columns) FROM tasks WHERE done = 0 ORDER BY due LIMIT \(limit)"
        try QuerySuite.time(
            "open", count: suite.repeats, into: &result, answers: &answers,
            query: { _ in try fetch(open, []) }, ids: ids)
        let openAfter = "SELECT \(columns) FROM tasks WHERE done = 0 AND due >= ? ORDER BY due LIMIT \(limit)"
        try QuerySuite.time(
            "openAfter", count: suite.thresholds.count, into: &result, answers: &answers,
            query: { try fetch(openAfter, [suite.thresholds[$0]]) }, ids: ids)
        result.notes["answers"] = answers.hex
        try pool.read { db in
            for sql in [byFolder, open, openAfter] {
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: sql == open ? [] : ["x"])
                    .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
                result.notes["plan." + (sql == byFolder ? "folder" : sql == open ? "open" : "openAfter")] = plan
            }
        }

        let page = "SELECT \(columns) FROM tasks WHERE due > ? ORDER BY due LIMIT \(QuerySuite.pageSize)"
        try QuerySuite.page(expected: tasks.count, into: &result) { (cursor: Int64?) in
            let rows = try fetch(page, [cursor ?? Int64.min])
            return (rows.map(\.id), rows.count == QuerySuite.pageSize ? rows.last?.due : nil)
        }
        // SQLite's rows are already structs (`TaskRow`): its typed figures are these.
        for name in ["folder", "open", "openAfter"] {
            for figure in ["p50", "p99"] {
                result.figures["query.\(name).typed.\(figure)"] = result.figures["query.\(name).\(figure)"]
            }
        }
        result.figures["query.paging.typed"] = result.figures["query.paging"]
        return result
    }
}
