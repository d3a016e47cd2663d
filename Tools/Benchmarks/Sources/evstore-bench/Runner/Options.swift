import Foundation

/// Command-line options of `evstore-bench`.
///
/// ```
/// evstore-bench [--events N] [--short] [--large] [--scenarios a,b,c] [--format table|jsonl]
///               [--seed S] [--workdir DIR] [--keep] [--scaling N1,N2,…] [--sync-events N]
///               [--postgres URL]
/// ```
struct Options: Sendable {
    enum Format: String, Sendable { case table, jsonl }

    var events = 200_000
    var short = false
    var large = false
    var scenarios: [Scenario] = Scenario.allCases
    var format = Format.table
    var seed: UInt64 = 42
    var workdir: String?
    var keep = false
    var scalingSizes: [Int]?
    /// Runs of each task; the best one is kept (for noisy, shared machines).
    var repeats = 1
    /// One durable commit per event: how many events.
    var singleCommits = 5_000
    /// Events per commit in the `single` scenario (1 unless `--group` says otherwise).
    var singleGroup = 1
    /// Concurrent writers, and events each writes.
    var writers = 32
    var eventsPerWriter = 250
    /// Queries per search set (whole words; prefixes).
    var queries = 1_000
    /// Point reads of items.
    var reads = 100_000
    /// Queries per query set of the `queries` scenario.
    var taskQueries = 1_000
    /// Live queries, scenario (a): commits that each change one observed answer.
    var liveCommits = 1_000
    /// Live queries, scenario (b): observers, concurrent writers, and how long they write.
    var liveObservers = 100
    var liveWriters = 32
    var liveSeconds = 3.0
    /// Events on the server before the first sync of the `sync` scenario.
    var syncEvents = 1_000_000
    /// Incremental syncs after the first one, and the events each pulls.
    var syncRounds = 20
    var syncRoundEvents = 100
    /// Live pulls timed per measurement (a push each, waited for in another replica's store).
    var livePulls = 100
    /// The load of the `sync` scenario: concurrent pushing clients, pushes each, events per push.
    var pushClients = 16
    var pushesPerClient = 50
    var pushEvents = 10
    /// Concurrent pulling clients, and pages of up to 1,000 events each pulls.
    var pullClients = 8
    var pullPages = 10
    /// The PostgreSQL database the `sync` scenario also measures (`nil`: the LMDB backend only).
    /// `run.sh` starts a durable throwaway server and passes its URL.
    var postgres: String?
    /// Set in the client process of the `sync` scenario: the sync servers' base URLs (two on
    /// PostgreSQL: two instances on one database), and the store's name on them.
    var remotes: [String] = []
    var remoteStore: String?
    /// Set in a child process: the one task to run.
    var child: ChildTask?

    static let usage = """
        usage: evstore-bench [options]
          --events N          events in the workload (default 200000)
          --short             CI mode: N = 20000 and smaller counts (finishes in well under a minute)
          --large             add N = 10,000,000 to the scaling runs
          --scenarios LIST    comma-separated, from: \(Scenario.allCases.map(\.rawValue).joined(separator: ","))
          --format FORMAT     table (default) or jsonl
          --seed S            workload seed (default 42)
          --workdir DIR       where stores are written (default: a new directory under /tmp)
          --keep              keep the stores after the run
          --scaling LIST      event counts for the scaling runs (default 100000,1000000)
          --sync-events N     events on the server for the first sync (default 1000000; --short: 20000)
          --postgres URL      also run the sync scenario on the PostgreSQL backend, on this database
                              (run.sh starts a durable throwaway PostgreSQL and passes its URL)
          --repeat K          run each task K times and keep the best run (default 1)
          --group N           events per commit in the single scenario (default 1); e.g. with
                              --child single --count 32000 --group 31, one thread commits groups
                              of the size the 32 writers' group commit gathers
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var explicitEvents: Int?
        var explicitSyncEvents: Int?
        var iterator = arguments.makeIterator()
        func value(_ name: String) throws -> String {
            guard let next = iterator.next() else { throw BenchError("\(name) needs a value\n\(usage)") }
            return next
        }
        func number(_ name: String) throws -> Int {
            let text = try value(name).replacingOccurrences(of: "_", with: "")
            guard let number = Int(text), number > 0 else { throw BenchError("\(name): not a positive number") }
            return number
        }
        var task = ChildTask()
        while let argument = iterator.next() {
            switch argument {
            case "--events": explicitEvents = try number(argument)
            case "--short": options.short = true
            case "--large": options.large = true
            case "--keep": options.keep = true
            case "--seed": options.seed = UInt64(try number(argument))
            case "--repeat": options.repeats = try number(argument)
            case "--workdir": options.workdir = try value(argument)
            case "--format":
                guard let format = Format(rawValue: try value(argument)) else {
                    throw BenchError("--format: table or jsonl")
                }
                options.format = format
            case "--scenarios":
                options.scenarios = try value(argument).split(separator: ",").map { name in
                    guard let scenario = Scenario(rawValue: String(name)) else {
                        throw BenchError("unknown scenario \(name)\n\(usage)")
                    }
                    return scenario
                }
            case "--scaling":
                options.scalingSizes = try value(argument).split(separator: ",").map {
                    guard let size = Int($0.replacingOccurrences(of: "_", with: "")), size > 0 else {
                        throw BenchError("--scaling: not a list of positive numbers")
                    }
                    return size
                }
            case "--sync-events": explicitSyncEvents = try number(argument)
            case "--postgres": options.postgres = try value(argument)
            case "--help", "-h": throw BenchError(usage)
            // Internal: the parent runs each scenario and engine in a child process.
            case "--child":
                guard let scenario = Scenario(rawValue: try value(argument)) else { throw BenchError("bad --child") }
                task.scenario = scenario
                options.child = task
            case "--engine":
                guard let engine = EngineName(rawValue: try value(argument)) else { throw BenchError("bad --engine") }
                task.engine = engine
            case "--mode":
                guard let mode = Mode(rawValue: try value(argument)) else { throw BenchError("bad --mode") }
                task.mode = mode
            case "--count": task.count = try number(argument)
            case "--group": options.singleGroup = try number(argument)
            case "--indexes":
                guard let count = Int(try value(argument)), count >= 0 else { throw BenchError("bad --indexes") }
                task.indexes = count
            case "--backend":
                guard let backend = ServerBackend(rawValue: try value(argument)) else {
                    throw BenchError("bad --backend")
                }
                task.backend = backend
            case "--remote": options.remotes = try value(argument).split(separator: ",").map(String.init)
            case "--store": options.remoteStore = try value(argument)
            default: throw BenchError("unknown option \(argument)\n\(usage)")
            }
        }
        if options.child != nil { options.child = task }
        if options.short {
            options.events = 20_000
            options.singleCommits = 500
            options.eventsPerWriter = 20
            options.reads = 20_000
            options.syncEvents = 20_000
            options.liveCommits = 300
            options.liveSeconds = 1
            options.livePulls = 50
            options.pushClients = 8
            options.pushesPerClient = 10
            options.pullClients = 4
            options.pullPages = 3
        }
        if let explicitEvents { options.events = explicitEvents }
        if let explicitSyncEvents { options.syncEvents = explicitSyncEvents }
        return options
    }

    /// The event counts of the scaling runs.
    var scaling: [Int] {
        if let scalingSizes { return scalingSizes }
        if short { return [5_000, 10_000] }
        return large ? [100_000, 1_000_000, 10_000_000] : [100_000, 1_000_000]
    }
}

/// The scenarios, in the order they run.
enum Scenario: String, CaseIterable, Sendable {
    /// 1. Batched append, 1,000 events per transaction, full pipeline.
    case append
    /// 7. Store size on disk after `append`.
    case size
    /// 4. Search: whole-word and prefix queries, top 20.
    case search
    /// 6. Point reads of items; full log scan with decoding.
    case reads
    /// 5. Rebuild items and index from the log (in place, so it runs after size, search, reads).
    case rebuild
    /// 2. One durable commit per event.
    case single
    /// 3. 32 concurrent writers, durable.
    case concurrent
    /// 11–12. A tasks collection of N items with declared indexes: filtered and sorted top-50
    /// queries, keyset paging, and what a declared index costs a batched append.
    case queries
    /// 13. Live queries (EventStore only): one observer's latency after a commit, and 100
    /// observers under 32 concurrent writers.
    case livequery
    /// 9. Append, search and rebuild at several sizes.
    case scaling
    /// 10. Sync over loopback HTTP on the LMDB and PostgreSQL backends: first sync of a seeded
    /// server store into a new client, incremental syncs, live pulls, concurrent pushes and pulls
    /// (its own size: `--sync-events`); on PostgreSQL also two server instances on one database.
    case sync
}

/// The engines compared.
enum EngineName: String, CaseIterable, Sendable {
    case eventstore
    case sqlite
    case lmdb
}

/// Commit durability: `durable` (EventStore durable, SQLite synchronous=FULL, LMDB default) or
/// `relaxed` (EventStore relaxed, SQLite synchronous=NORMAL, LMDB MDB_NOMETASYNC): crash-safe,
/// but a power loss may undo the last commits.
///
/// `nosearch` is `durable` without the search index (EventStore with no searchable field,
/// SQLite without the FTS5 table): the cost of the log and the items alone.
enum Mode: String, Sendable {
    case durable
    case relaxed
    case nosearch

    /// Whether commits are flushed to disk.
    var isDurable: Bool { self != .relaxed }
}

/// What one child process runs.
struct ChildTask: Sendable {
    var scenario = Scenario.append
    var engine = EngineName.eventstore
    var mode = Mode.durable
    /// Scenario-specific count (events for single/concurrent, queries, reads).
    var count: Int?
    /// `queries`: how many declared indexes the tasks store gets (0, 1, or all of the query
    /// scenario's, which also runs the queries).
    var indexes: Int?
    /// `sync`: the server's storage backend.
    var backend: ServerBackend?
}

extension ChildTask {
    /// What tells this task apart from the others of its scenario, for figure keys and labels:
    /// `.durable` for append and single, `.idx1` for queries with one index, else empty.
    var variant: String {
        switch scenario {
        case .append, .single: ".\(mode.rawValue)"
        case .queries: ".idx\(indexes ?? QuerySuite.indexes.count)"
        case .sync: backend.map { ".\($0.rawValue)" } ?? ""
        default: ""
        }
    }
}
