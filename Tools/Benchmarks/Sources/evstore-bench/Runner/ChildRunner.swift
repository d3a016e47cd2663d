import Foundation

/// Runs one task in this (child) process and prints its figures as one JSON line on stdout,
/// after the marker ``marker``. Progress and errors go to stderr.
enum ChildRunner {
    static let marker = "@@result "

    static func run(_ options: Options, task: ChildTask) throws {
        let sampler = MemorySampler()
        let context = try BenchContext(options: options, task: task)
        let engine: any BenchEngine =
            switch task.engine {
            case .eventstore: EventStoreEngine(context: context)
            case .sqlite: SQLiteEngine(context: context)
            case .lmdb: RawLMDBEngine(context: context)
            }
        var result: ChildResult
        switch task.scenario {
        case .append: result = try engine.append(mode: task.mode)
        case .single: result = try engine.single(mode: task.mode, count: task.count ?? options.singleCommits)
        case .concurrent:
            result = try engine.concurrent(writers: options.writers, perWriter: task.count ?? options.eventsPerWriter)
        case .search:
            let count = task.count ?? options.queries
            result = try engine.search(
                exact: Queries.exact(context.workload, count: count),
                prefix: Queries.prefix(context.workload, count: count),
                phrases: Queries.phrases(context.workload, count: count))
        case .reads: result = try engine.reads(ids: context.readIDs(task.count ?? options.reads))
        case .rebuild: result = try engine.rebuild()
        case .size: result = try engine.size()
        case .queries:
            let indexes = task.indexes ?? QuerySuite.indexes.count
            let queries = task.count ?? options.taskQueries
            switch task.engine {
            case .eventstore: result = try EventStoreQueries(context: context).run(indexes: indexes, queries: queries)
            case .sqlite: result = try SQLiteQueries(context: context).run(indexes: indexes, queries: queries)
            case .lmdb: throw BenchError("the queries scenario compares EventStore and SQLite")
            }
        case .livequery: result = try LiveQueryBenchmark(context: context).run()
        case .scaling: throw BenchError("scaling is run by the parent")
        case .sync:
            // The server side starts the client side in a child process of its own, with --remote.
            let backend = task.backend ?? .lmdb
            if let store = options.remoteStore, !options.remotes.isEmpty {
                result = try SyncClient(
                    context: context, backend: backend, remotes: options.remotes, storeName: store, sampler: sampler
                ).run()
            } else {
                result = try SyncBenchmark(context: context, backend: backend).run()
            }
        }
        let memory = sampler.finish()
        result.figures["rss.peak"] = memory.peak
        result.figures["rss.anon"] = memory.anonymous
        // Bytes handed to write(2)/pwrite(2) by the whole process: what each engine writes.
        if let written = ProcessStats.writtenBytes() { result.figures["io.wchar"] = written }
        let data = try JSONEncoder().encode(result)
        print(marker + String(decoding: data, as: UTF8.self))
    }
}

/// Starts child processes of this executable.
enum ChildProcess {
    /// This executable's path.
    static let executable: String = {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }()

    /// Runs `task` for a workload of `events` events in a child process and returns its figures.
    static func run(
        _ task: ChildTask, events: Int, options: Options, workdir: String, extraArguments: [String] = []
    ) throws -> ChildResult {
        var arguments = [
            "--child", task.scenario.rawValue, "--engine", task.engine.rawValue, "--mode", task.mode.rawValue,
            "--events", String(events), "--seed", String(options.seed), "--workdir", workdir,
        ]
        if let count = task.count { arguments += ["--count", String(count)] }
        if let indexes = task.indexes { arguments += ["--indexes", String(indexes)] }
        if let backend = task.backend { arguments += ["--backend", backend.rawValue] }
        if options.short { arguments.append("--short") }
        if let postgres = options.postgres { arguments += ["--postgres", postgres] }
        arguments += extraArguments
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0,
            let line = text.split(separator: "\n").last(where: { $0.hasPrefix(marker) })
        else {
            throw BenchError(
                "\(task.scenario.rawValue)/\(task.engine.rawValue)/\(task.mode.rawValue) failed (status \(process.terminationStatus))\n\(text)"
            )
        }
        return try JSONDecoder().decode(ChildResult.self, from: Data(line.dropFirst(marker.count).utf8))
    }

    private static let marker = ChildRunner.marker
}
