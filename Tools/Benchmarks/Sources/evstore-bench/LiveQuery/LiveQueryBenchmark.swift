import EventStore
import Foundation

/// Scenario 13, EventStore only: live queries (`store.observe(_:)`) on the tasks store of the
/// `queries` scenario (N tasks, three declared indexes), durable.
///
/// - *One observer*: `folder == X ORDER BY due DESC LIMIT 50` is observed while this thread
///   commits, one at a time, a change to that answer (four in five retitle its first item, one
///   in five puts a new task at its top); each commit waits for the answer that shows it. Timed:
///   from `append`'s return to the answer's arrival at the consumer (0 when it arrived first).
///   The first 50 commits warm up.
/// - *Many observers*: 32 writer threads append and update tasks, one change per commit, for a
///   few seconds without any live query (the baseline rate), then again with one live query per
///   folder open. Then every observer's last answer must
///   equal a fresh `store.query` of the final state (else a miss, which fails the run), and no
///   observer may have yielded an answer equal to its previous one (a redundant yield).
struct LiveQueryBenchmark {
    let context: BenchContext

    static let warmup = 50
    /// How long an answer may take before the run fails.
    static let timeout: TimeInterval = 30

    func run() throws -> ChildResult {
        let tasks = context.taskWorkload.tasks()
        let path = "\(context.directory)/livequery-eventstore"
        context.removeStore(path)
        let store = try Store.open(
            at: path, configuration: EventStoreQueries.configuration(indexes: QuerySuite.indexes.count))
        defer { store.close() }
        _ = try EventStoreQueries.fill(store, with: tasks)
        var result = ChildResult()
        try oneObserver(store, into: &result)
        try manyObservers(store, tasks: tasks, into: &result)
        return result
    }

    // MARK: One observer

    private func oneObserver(_ store: Store, into result: inout ChildResult) throws {
        let collection = TaskWorkload.collection
        let folder = TaskWorkload.folder(0)
        let query = EventStoreQueries.byFolder(folder)
        guard let first = try store.query(query).items.first, case .int(var topDue)? = first["due"] else {
            throw BenchError("live query: \(folder) is empty")
        }
        var topID = first.id
        // Commit k shows as the title "live k" on the answer's first item.
        let arrivals = ArrivalTimes()
        let arrived = DispatchSemaphore(value: 0)
        let consumer = Task.detached {
            for try await page in store.observe(query) {
                let now = monotonicNanoseconds()
                if case .string(let title)? = page.items.first?["title"], title.hasPrefix("live "),
                    let commit = Int(title.dropFirst(5))
                {
                    arrivals.record(commit, at: now)
                }
                arrived.signal()
            }
        }
        defer {
            consumer.cancel()
            _ = try? runBlocking { try await consumer.value }
        }
        guard arrived.wait(timeout: .now() + LiveQueryBenchmark.timeout) == .success else {
            throw BenchError("live query: no first answer")
        }
        var latencies = LatencySamples()
        var appends = LatencySamples()
        var early = 0
        let commits = context.options.liveCommits
        for commit in 1...(LiveQueryBenchmark.warmup + commits) {
            let change: Change
            if commit % 5 == 0 {
                topDue += 1
                topID = "live-\(commit)"
                change = .put(
                    collection, id: topID,
                    fields: [
                        "folder": .string(folder), "due": .int(topDue), "done": .bool(false),
                        "title": .string("live \(commit)"),
                    ])
            } else {
                change = .patch(collection, id: topID, fields: ["title": .string("live \(commit)")])
            }
            let start = monotonicNanoseconds()
            _ = try store.append([change])
            let returned = monotonicNanoseconds()
            let deadline = DispatchTime.now() + LiveQueryBenchmark.timeout
            var arrival = arrivals[commit]
            while arrival == nil {
                guard arrived.wait(timeout: deadline) == .success else {
                    throw BenchError(
                        "live query: commit \(commit) changed the answer, but no new answer came within 30 s")
                }
                arrival = arrivals[commit]
            }
            guard commit > LiveQueryBenchmark.warmup, let arrival else { continue }
            appends.record(returned - start)
            if arrival < returned { early += 1 }
            latencies.record(arrival > returned ? arrival - returned : 0)
        }
        result.figures["live.one.p50"] = latencies.percentile(50)
        result.figures["live.one.p99"] = latencies.percentile(99)
        result.figures["live.one.max"] = latencies.percentile(100)
        result.figures["live.one.early"] = Double(early)
        result.figures["live.one.commits"] = Double(commits)
        result.figures["live.one.append.p50"] = appends.percentile(50)
    }

    // MARK: Many observers

    private func manyObservers(_ store: Store, tasks: [TaskItem], into result: inout ChildResult) throws {
        let options = context.options
        // The same writers first without live queries, for what the observers cost them.
        let (baseline, baselineElapsed) = try write(store, tasks: tasks, round: 1)
        result.figures["live.many.baseline"] = Double(baseline) / (Double(baselineElapsed) / 1e9)
        let folders = (0..<min(options.liveObservers, TaskWorkload.folderCount)).map(TaskWorkload.folder)
        let logs = folders.map { _ in ObserverLog() }
        let observers = zip(folders, logs).map { folder, log in
            Task.detached {
                for try await page in store.observe(EventStoreQueries.byFolder(folder)) { log.record(page) }
            }
        }
        defer {
            for observer in observers { observer.cancel() }
            for observer in observers { _ = try? runBlocking { try await observer.value } }
        }
        try LiveQueryBenchmark.waitUntil("every live query's first answer") { logs.allSatisfy { $0.yields > 0 } }

        let (commits, elapsed) = try write(store, tasks: tasks, round: 2)
        // Every observer must come to the final state's answer; none may be left behind.
        let finished = monotonicNanoseconds()
        let finalAnswers = try folders.map { try store.query(EventStoreQueries.byFolder($0)) }
        func converged(_ index: Int) -> Bool {
            logs[index].last.map { ObserverLog.sameAnswer($0, finalAnswers[index]) } ?? false
        }
        let deadline = finished + UInt64(LiveQueryBenchmark.timeout * 1e9)
        while !folders.indices.allSatisfy(converged) && monotonicNanoseconds() < deadline { usleep(5_000) }
        let catchUp = Double(monotonicNanoseconds() - finished) / 1e6
        let misses = folders.indices.filter { !converged($0) }
        let yields = logs.reduce(0) { $0 + $1.yields } - logs.count
        let redundant = logs.reduce(0) { $0 + $1.redundant }
        result.figures["live.many.observers"] = Double(folders.count)
        result.figures["live.many.writers"] = Double(options.liveWriters)
        result.figures["live.many.commits"] = Double(commits)
        result.figures["live.many.rate"] = Double(commits) / (Double(elapsed) / 1e9)
        result.figures["live.many.yields"] = Double(yields)
        result.figures["live.many.redundant"] = Double(redundant)
        result.figures["live.many.misses"] = Double(misses.count)
        result.figures["live.many.catchup"] = catchUp
        guard misses.isEmpty else {
            throw BenchError(
                "live queries missed a change: \(misses.count) of \(folders.count) observers did not yield the final answer "
                    + "(\(misses.prefix(5).map { folders[$0] }.joined(separator: ", "))) within 30 s after \(commits) commits; "
                    + "\(yields) answers yielded, \(redundant) redundant")
        }
    }

    /// Runs the writers of *many observers* for ``Options/liveSeconds``: 32 threads, one change
    /// per commit, on random tasks (40% retitle, 15% new due date, 10% done or not, 10% another
    /// folder) or their own new tasks (17% put, 8% delete); `round` tells the runs apart.
    /// Returns the commits and the nanoseconds they took.
    private func write(_ store: Store, tasks: [TaskItem], round: Int) throws -> (commits: Int, nanoseconds: UInt64) {
        let workload = context.taskWorkload
        let commits = SharedCounter()
        let seconds = context.options.liveSeconds
        let collection = TaskWorkload.collection
        let elapsed = try runConcurrently(writers: context.options.liveWriters) { writer in
            var random = SeededRandom(
                seed: workload.seed ^ (UInt64(round * 1_000 + writer + 1) &* 0x9E37_79B9_7F4A_7C15))
            var created: [String] = []
            let end = monotonicNanoseconds() + UInt64(seconds * 1e9)
            var step = 0
            while monotonicNanoseconds() < end {
                step += 1
                let target = tasks[random.below(tasks.count)].id
                let roll = random.below(100)
                let change: Change
                if roll < 40 {
                    change = .patch(collection, id: target, fields: ["title": .string("w\(writer) \(step)")])
                } else if roll < 55 {
                    change = .patch(
                        collection, id: target,
                        fields: ["due": .int(TaskWorkload.firstDue + Int64(random.below(workload.dueSpan)))])
                } else if roll < 65 {
                    change = .patch(collection, id: target, fields: ["done": .bool(random.below(2) == 0)])
                } else if roll < 75 {
                    change = .patch(
                        collection, id: target,
                        fields: ["folder": .string(TaskWorkload.folder(random.below(TaskWorkload.folderCount)))])
                } else if roll < 92 || created.isEmpty {
                    let id = "w\(writer)-\(round)-\(step)"
                    created.append(id)
                    change = .put(
                        collection, id: id,
                        fields: [
                            "folder": .string(TaskWorkload.folder(random.below(TaskWorkload.folderCount))),
                            "due": .int(TaskWorkload.firstDue + Int64(random.below(workload.dueSpan))),
                            "done": .bool(false), "title": .string("w\(writer) \(step)"),
                        ])
                } else {
                    change = .delete(collection, id: created.remove(at: random.below(created.count)))
                }
                _ = try store.append([change])
                commits.add(1)
            }
        }
        return (commits.value, elapsed)
    }

    /// Waits until `condition` holds, polling every 5 ms; fails after ``timeout``.
    static func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while !condition() {
            guard monotonicNanoseconds() < deadline else {
                throw BenchError("live query: timed out waiting for \(what)")
            }
            usleep(5_000)
        }
    }
}
