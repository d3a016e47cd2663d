import ArgumentParser
import Foundation

/// The command line of `evstore-bench` (see Tools/Benchmarks/README.md). The options after
/// `--child` are the parent's to its child processes, one per scenario, engine and mode.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evstore-bench",
        abstract: "EventStore against SQLite (GRDB, FTS5) and raw LMDB on one seeded workload, and sync over HTTP.")

    @Option(help: "Events in the workload (default 200000; with --short 20000).")
    var events: PositiveCount?
    @Flag(help: "CI mode: N = 20000 and smaller counts (finishes in well under a minute).")
    var short = false
    @Flag(help: "Add N = 10,000,000 to the scaling runs.")
    var large = false
    @Option(
        help: "Comma-separated, from: \(Scenario.allCases.map(\.rawValue).joined(separator: ",")).",
        transform: { try BenchCommand.list($0, "--scenarios") { Scenario(rawValue: $0) } })
    var scenarios: [Scenario]?
    @Option(help: "table or jsonl.")
    var format = Options.Format.table
    @Option(help: "Workload seed.")
    var seed: PositiveCount = 42
    @Option(help: "Where stores are written (default: a new directory under /tmp).")
    var workdir: String?
    @Flag(help: "Keep the stores after the run.")
    var keep = false
    @Option(
        help: "Event counts for the scaling runs (default 100000,1000000).",
        transform: { try BenchCommand.list($0, "--scaling") { PositiveCount(argument: $0)?.value } })
    var scaling: [Int]?
    @Option(help: "Events on the server for the first sync (default 1000000; with --short 20000).")
    var syncEvents: PositiveCount?
    @Option(help: "Also run the sync scenario on the PostgreSQL backend, on this database (run.sh passes one).")
    var postgres: String?
    @Option(name: .customLong("repeat"), help: "Run each task K times and keep the best run.")
    var repeats: PositiveCount = 1
    @Option(
        help:
            "Events per commit in the single scenario (with --child single --count 32000 --group 31, one thread commits groups of the size the 32 writers' group commit gathers)."
    )
    var group: PositiveCount = 1

    @Option(help: .hidden) var child: Scenario?
    @Option(help: .hidden) var engine = EngineName.eventstore
    @Option(help: .hidden) var mode = Mode.durable
    @Option(help: .hidden) var count: PositiveCount?
    @Option(help: .hidden) var indexes: Int?
    @Option(help: .hidden) var backend: ServerBackend?
    @Option(help: .hidden, transform: { $0.split(separator: ",").map(String.init) }) var remote: [String] = []
    @Option(help: .hidden) var store: String?

    /// A number > 0, written with or without `_` separators.
    struct PositiveCount: ExpressibleByArgument, ExpressibleByIntegerLiteral, CustomStringConvertible, Sendable {
        var value: Int

        init?(argument: String) {
            guard let value = Int(argument.replacingOccurrences(of: "_", with: "")), value > 0 else { return nil }
            self.value = value
        }

        init(integerLiteral value: Int) { self.value = value }

        var description: String { String(value) }
    }

    static func list<T>(_ text: String, _ option: String, _ element: (String) -> T?) throws -> [T] {
        try text.split(separator: ",").map { name in
            guard let value = element(String(name)) else {
                throw ValidationError("\(option): \(name) is not one of them")
            }
            return value
        }
    }

    func validate() throws {
        if let indexes, indexes < 0 { throw ValidationError("--indexes: 0 or more") }
    }

    /// The run these options ask for.
    var options: Options {
        var options = Options()
        if short { options.shorten() }
        options.short = short
        options.large = large
        if let events { options.events = events.value }
        if let syncEvents { options.syncEvents = syncEvents.value }
        if let scenarios { options.scenarios = scenarios }
        options.format = format
        options.seed = UInt64(seed.value)
        options.workdir = workdir
        options.keep = keep
        options.scalingSizes = scaling
        options.postgres = postgres
        options.repeats = repeats.value
        options.singleGroup = group.value
        options.remotes = remote
        options.remoteStore = store
        if let child {
            options.child = ChildTask(
                scenario: child, engine: engine, mode: mode, count: count?.value, indexes: indexes, backend: backend)
        }
        return options
    }

    func run() throws {
        let options = options
        do {
            if let task = options.child {
                try ChildRunner.run(options, task: task)
            } else {
                try Orchestrator(options: options).run()
            }
        } catch {
            log("evstore-bench: \(error)")
            throw ExitCode.failure
        }
    }
}

extension Options.Format: ExpressibleByArgument {}
extension Scenario: ExpressibleByArgument {}
extension EngineName: ExpressibleByArgument {}
extension Mode: ExpressibleByArgument {}
extension ServerBackend: ExpressibleByArgument {}
