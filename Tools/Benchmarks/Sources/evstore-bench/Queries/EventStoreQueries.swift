import EventStore

/// The `queries` scenario on EventStore: the tasks appended as puts, 1,000 per transaction,
/// into a new durable store with 0, 1 or 3 declared indexes (no full-text index: the tasks
/// collection has no searchable field); with all three, the ``QuerySuite`` through
/// `store.query(_:)` and `QueryPage.next` cursors.
struct EventStoreQueries {
    let context: BenchContext

    /// A durable configuration with the first `indexes` of ``QuerySuite/indexes`` declared and
    /// search turned off for the tasks collection.
    static func configuration(indexes: Int) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.durability = .durable
        configuration.search.collections[TaskWorkload.collection] = []
        configuration.indexes = QuerySuite.indexes(indexes).map { IndexDefinition(TaskWorkload.collection, fields: $0) }
        return configuration
    }

    static func fields(_ task: TaskItem) -> [String: Value] {
        ["folder": .string(task.folder), "due": .int(task.due), "done": .bool(task.done), "title": .string(task.title)]
    }

    /// Appends `tasks` as puts, ``TaskWorkload/batch`` per transaction; returns the time spent
    /// in `append`.
    static func fill(_ store: Store, with tasks: [TaskItem]) throws -> Stopwatch {
        var watch = Stopwatch()
        var start = 0
        while start < tasks.count {
            let changes = tasks[start..<min(start + TaskWorkload.batch, tasks.count)].map {
                Change.put(TaskWorkload.collection, id: $0.id, fields: fields($0))
            }
            try watch.measure { _ = try store.append(changes) }
            start += changes.count
        }
        return watch
    }

    /// `folder == X ORDER BY due DESC LIMIT 50`.
    static func byFolder(_ folder: String) -> Query {
        Query(TaskWorkload.collection).filter(.equal("folder", .string(folder)))
            .sorted(by: "due", .descending).limit(QuerySuite.limit)
    }

    /// `done == false AND due >= T ORDER BY due LIMIT 50`.
    static func open(from due: Int64) -> Query {
        Query(TaskWorkload.collection).filter(.and([.equal("done", false), .greaterOrEqual("due", .int(due))]))
            .sorted(by: "due").limit(QuerySuite.limit)
    }

    /// Appends `tasks` as typed models (`TypedCollection.put`), ``TaskWorkload/batch`` per
    /// transaction, into a new store without declared indexes; returns the rate.
    func fillTyped(_ tasks: [TaskItem], path: String) throws -> Double {
        context.removeStore(path)
        let store = try Store.open(at: path, configuration: EventStoreQueries.configuration(indexes: 0))
        defer { store.close() }
        let typed = store.collection(TaskItem.self, named: TaskWorkload.collection)
        var watch = Stopwatch()
        var start = 0
        while start < tasks.count {
            let batch = Array(tasks[start..<min(start + TaskWorkload.batch, tasks.count)])
            try watch.measure { _ = try runBlocking { try await typed.put(batch) } }
            start += batch.count
        }
        return watch.rate(tasks.count)
    }

    func run(indexes: Int, queries: Int) throws -> ChildResult {
        let workload = context.taskWorkload
        let tasks = workload.tasks()
        let path = "\(context.directory)/tasks-eventstore-idx\(indexes)"
        context.removeStore(path)
        let store = try Store.open(at: path, configuration: EventStoreQueries.configuration(indexes: indexes))
        defer { store.close() }
        var result = ChildResult()
        let watch = try EventStoreQueries.fill(store, with: tasks)
        result.figures["tasks.append.idx\(indexes)"] = watch.rate(tasks.count)
        result.figures["tasks.slowest.idx\(indexes)"] = watch.slowestMilliseconds
        if indexes == 0 {
            // The bytes of the untyped append alone: the typed one below writes a store of its own.
            if let written = ProcessStats.writtenBytes() { result.figures["tasks.wchar.idx0"] = written }
            result.figures["tasks.append.typed.idx0"] = try fillTyped(tasks, path: path + "-typed")
        }
        guard indexes == QuerySuite.indexes.count else { return result }

        let suite = QuerySuite(workload: workload, count: queries)
        let collection = TaskWorkload.collection
        let limit = QuerySuite.limit
        var answers = FNV1a()
        let ids: (QueryPage) -> [String] = { $0.items.map(\.id) }
        let open = Query(collection).filter(.equal("done", false)).sorted(by: "due").limit(limit)
        try QuerySuite.time(
            "folder", count: suite.folders.count, into: &result, answers: &answers,
            query: { try store.query(EventStoreQueries.byFolder(suite.folders[$0])) }, ids: ids)
        try QuerySuite.time(
            "open", count: suite.repeats, into: &result, answers: &answers,
            query: { _ in try store.query(open) }, ids: ids)
        try QuerySuite.time(
            "openAfter", count: suite.thresholds.count, into: &result, answers: &answers,
            query: { try store.query(EventStoreQueries.open(from: suite.thresholds[$0])) }, ids: ids)
        result.notes["answers"] = answers.hex

        let byDue = Query(collection).sorted(by: "due").limit(QuerySuite.pageSize)
        try QuerySuite.page(expected: tasks.count, into: &result) { (cursor: String?) in
            let page = try store.query(byDue.after(cursor))
            return (page.items.map(\.id), page.next)
        }

        // The same questions as typed queries on `TaskItem` models, built in the timed closure
        // as an app builds them.
        let typed = store.collection(TaskItem.self, named: collection)
        var typedAnswers = FNV1a()
        let modelIDs: (TypedPage<TaskItem>) -> [String] = { $0.models.map(\.id) }
        try QuerySuite.time(
            "folder.typed", count: suite.folders.count, into: &result, answers: &typedAnswers,
            query: {
                try typed.fetch(
                    typed.query().where(\.folder, .equals(suite.folders[$0])).sorted(by: \.due, .descending).limit(
                        limit))
            }, ids: modelIDs)
        try QuerySuite.time(
            "open.typed", count: suite.repeats, into: &result, answers: &typedAnswers,
            query: { _ in try typed.fetch(typed.query().where(\.done, .equals(false)).sorted(by: \.due).limit(limit)) },
            ids: modelIDs)
        try QuerySuite.time(
            "openAfter.typed", count: suite.thresholds.count, into: &result, answers: &typedAnswers,
            query: {
                try typed.fetch(
                    typed.query().where(\.done, .equals(false)).where(\.due, .atLeast(suite.thresholds[$0]))
                        .sorted(by: \.due).limit(limit))
            }, ids: modelIDs)
        guard typedAnswers.hex == answers.hex else {
            throw BenchError("typed queries answered \(typedAnswers.hex), untyped \(answers.hex)")
        }
        try QuerySuite.page(expected: tasks.count, into: &result, name: "query.paging.typed") { (cursor: String?) in
            let page = try typed.fetch(typed.query().sorted(by: \.due).limit(QuerySuite.pageSize).after(cursor))
            return (page.models.map(\.id), page.next)
        }
        guard result.notes["paging.typed"] == result.notes["paging"] else {
            throw BenchError("typed paging returned the models in another order than untyped paging")
        }
        return result
    }
}
