import Foundation

/// Figures of one workload size: `values[figure][engine]`, plus notes per engine.
struct Results: Sendable {
    var values: [String: [EngineName: Double]] = [:]
    var notes: [EngineName: [String: String]] = [:]

    subscript(figure: String, engine: EngineName) -> Double? {
        get { values[figure]?[engine] }
        set { values[figure, default: [:]][engine] = newValue }
    }

    mutating func record(_ result: ChildResult, task: ChildTask) {
        for (key, value) in result.figures {
            if key.hasPrefix("rss.") || key.hasPrefix("io.") {
                // rss.peak → rss.append.durable.peak
                let scenario = task.scenario.rawValue + task.variant
                let parts = key.split(separator: ".", maxSplits: 1)
                self["\(parts[0]).\(scenario).\(parts[1])", task.engine] = value
            } else {
                self[key, task.engine] = value
            }
        }
        for (key, note) in result.notes {
            notes[task.engine, default: [:]]["\(task.scenario.rawValue).\(task.mode.rawValue).\(key)"] = note
        }
    }
}

/// Runs the selected scenarios, each engine in its own child process, and prints the report.
struct Orchestrator {
    let options: Options
    let workdir: String
    private let ownsWorkdir: Bool

    init(options: Options) throws {
        self.options = options
        if let workdir = options.workdir {
            try FileManager.default.createDirectory(atPath: workdir, withIntermediateDirectories: true)
            self.workdir = workdir
            ownsWorkdir = false
        } else {
            var template = Array("/tmp/evstore-bench-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw BenchError("cannot create a work directory in /tmp") }
            self.workdir = String(cString: made)
            ownsWorkdir = true
        }
    }

    func run() throws {
        do {
            try runAll()
        } catch {
            // Leave no stores behind after a failure, unless asked to keep them.
            if ownsWorkdir && !options.keep { try? FileManager.default.removeItem(atPath: workdir) }
            throw error
        }
    }

    private func runAll() throws {
        let started = Date()
        let report = Report(options: options, workdir: workdir)
        report.printHeader()
        let selected = Set(options.scenarios)
        var main = Results()
        let mainScenarios = Scenario.allCases.filter { selected.contains($0) && $0 != .scaling && $0 != .sync }
        if !mainScenarios.isEmpty {
            main = try runSize(options.events, scenarios: mainScenarios, full: true)
            report.printMain(main)
        }
        if selected.contains(.scaling) {
            var scaling: [(Int, Results)] = []
            for events in options.scaling {
                let results = try runSize(events, scenarios: [.append, .search, .rebuild], full: false)
                scaling.append((events, results))
                if !options.keep {
                    try? FileManager.default.removeItem(
                        atPath: BenchContext.directory(workdir: workdir, events: events))
                }
            }
            report.printScaling(scaling)
        }
        if selected.contains(.sync) {
            // Both backends side by side; PostgreSQL only with a database to run on.
            let backends = ServerBackend.allCases.filter { $0 != .postgres || options.postgres != nil }
            let tasks = backends.map { ChildTask(scenario: .sync, engine: .eventstore, backend: $0) }
            let results = try runTasks(tasks, events: options.syncEvents)
            if !options.keep && options.syncEvents != options.events {
                try? FileManager.default.removeItem(
                    atPath: BenchContext.directory(workdir: workdir, events: options.syncEvents))
            }
            report.printSync(results, events: options.syncEvents)
        }
        if !options.keep {
            try? FileManager.default.removeItem(
                atPath: BenchContext.directory(workdir: workdir, events: options.events))
            if ownsWorkdir { try? FileManager.default.removeItem(atPath: workdir) }
        } else {
            log("stores kept in \(workdir)")
        }
        log(String(format: "total time %.1f s", Date().timeIntervalSince(started)))
    }

    /// Runs `scenarios` at one workload size. `full` adds the relaxed-durability variants.
    private func runSize(_ events: Int, scenarios: [Scenario], full: Bool) throws -> Results {
        var tasks: [ChildTask] = []
        let needsStores = !Set(scenarios).isDisjoint(with: [.size, .search, .reads, .rebuild])
        let storesExist = FileManager.default.fileExists(
            atPath: BenchContext.directory(workdir: workdir, events: events) + "/append-eventstore-durable/data.mdb")
        if scenarios.contains(.append) || (needsStores && !storesExist) {
            tasks += EngineName.allCases.map { ChildTask(scenario: .append, engine: $0, mode: .durable) }
            if full && scenarios.contains(.append) {
                tasks += EngineName.allCases.map { ChildTask(scenario: .append, engine: $0, mode: .relaxed) }
                tasks += [EngineName.eventstore, .sqlite].map {
                    ChildTask(scenario: .append, engine: $0, mode: .nosearch)
                }
            }
        }
        for scenario in scenarios {
            switch scenario {
            case .size, .rebuild:
                tasks += EngineName.allCases.map { ChildTask(scenario: scenario, engine: $0) }
            case .reads:
                tasks += EngineName.allCases.map { ChildTask(scenario: scenario, engine: $0, count: options.reads) }
            case .search:
                tasks += [EngineName.eventstore, .sqlite].map {
                    ChildTask(scenario: scenario, engine: $0, count: options.queries)
                }
            case .single:
                for mode in [Mode.durable, .relaxed] {
                    tasks += EngineName.allCases.map {
                        ChildTask(scenario: .single, engine: $0, mode: mode, count: options.singleCommits)
                    }
                }
                tasks += [EngineName.eventstore, .sqlite].map {
                    ChildTask(scenario: .single, engine: $0, mode: .nosearch, count: options.singleCommits)
                }
            case .concurrent:
                tasks += EngineName.allCases.map {
                    ChildTask(scenario: .concurrent, engine: $0, count: options.eventsPerWriter)
                }
            case .queries:
                // Side by side: each engine with 0, then 1, then all declared indexes (the last
                // runs the queries).
                for indexes in [0, 1, QuerySuite.indexes.count] {
                    tasks += [EngineName.eventstore, .sqlite].map {
                        ChildTask(scenario: .queries, engine: $0, indexes: indexes)
                    }
                }
            case .livequery:
                tasks.append(ChildTask(scenario: .livequery, engine: .eventstore))
            case .append, .scaling, .sync:
                break
            }
        }
        var results = try runTasks(tasks, events: events)
        // Raw LMDB never has a search index: its durable figures are its no-search figures.
        for scenario in ["append", "single"] where results.values["\(scenario).nosearch"] != nil {
            for key in ["\(scenario).nosearch", "io.\(scenario).nosearch.wchar"] {
                results[key, .lmdb] = results[key.replacingOccurrences(of: "nosearch", with: "durable"), .lmdb]
            }
        }
        for engine in EngineName.allCases {
            for (mode, suffix) in [("durable", ""), ("nosearch", ".nosearch")] {
                if let bytes = results["io.append.\(mode).wchar", engine] {
                    results["written.append\(suffix)", engine] = bytes / Double(events) / 1024
                }
                if let bytes = results["io.single.\(mode).wchar", engine] {
                    results["written.single\(suffix)", engine] = bytes / Double(options.singleCommits) / 1024
                }
            }
            if let bytes = results["io.concurrent.wchar", engine] {
                results["written.concurrent", engine] = bytes / Double(options.writers * options.eventsPerWriter) / 1024
            }
            if let bytes = results["io.rebuild.wchar", engine] {
                results["written.rebuild", engine] = bytes / Double(events) / 1024
            }
        }
        try Orchestrator.deriveQueryFigures(&results, events: events)
        if let concurrent = results.values["concurrent"] {
            for (engine, rate) in concurrent {
                if let single = results["single.durable", engine], single > 0 {
                    results["speedup", engine] = rate / single
                }
            }
        }
        return results
    }

    /// Runs each task in a child process (`--repeat` times, keeping the best run) and records
    /// its figures.
    private func runTasks(_ tasks: [ChildTask], events: Int) throws -> Results {
        var results = Results()
        for (index, task) in tasks.enumerated() {
            let label =
                "[\(index + 1)/\(tasks.count)] N=\(events) \(task.scenario.rawValue) \(task.engine.rawValue)"
                + task.variant.replacingOccurrences(of: ".", with: " ")
            var best: ChildResult?
            for run in 0..<(task.scenario == .size ? 1 : options.repeats) {
                let start = monotonicNanoseconds()
                let loadBefore = ProcessStats.loadAverage() ?? 0
                let result = try ChildProcess.run(task, events: events, options: options, workdir: workdir)
                let seconds = Double(monotonicNanoseconds() - start) / 1e9
                // The machine's load: on a shared machine, what else ran meanwhile.
                let load = String(format: "  (load average %.1f → %.1f)", loadBefore, ProcessStats.loadAverage() ?? 0)
                let repeated = options.repeats > 1 ? " (run \(run + 1))" : ""
                log(label + repeated + String(format: "  %.1f s", seconds) + load)
                if best.map({ Orchestrator.isBetter(result, than: $0, task: task) }) ?? true { best = result }
            }
            if let best { results.record(best, task: task) }
        }
        return results
    }
}

extension Orchestrator {
    /// Whether `result` is a better run of `task` than `other`, by the task's main figure.
    static func isBetter(_ result: ChildResult, than other: ChildResult, task: ChildTask) -> Bool {
        let (key, higherIsBetter): (String, Bool) =
            switch task.scenario {
            case .append, .single: ("\(task.scenario.rawValue).\(task.mode.rawValue)", true)
            case .concurrent: ("concurrent", true)
            case .rebuild: ("rebuild", true)
            case .reads: ("reads.point", true)
            case .search: ("search.exact.p50", false)
            case .size, .scaling: ("size", false)
            case .sync: ("sync.\((task.backend ?? .lmdb).rawValue).first.rate", true)
            case .queries:
                task.indexes == QuerySuite.indexes.count
                    ? ("query.folder.p50", false) : ("tasks.append.idx\(task.indexes ?? 0)", true)
            case .livequery: ("live.one.p99", false)
            }
        guard let new = result.figures[key], let old = other.figures[key] else { return false }
        return higherIsBetter ? new > old : new < old
    }
}

/// Writes a progress line to stderr.
func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
