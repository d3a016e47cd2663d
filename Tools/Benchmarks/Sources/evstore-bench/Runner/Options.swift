import Foundation

/// What a run of `evstore-bench` does: the command line (``BenchCommand``) with the counts
/// of its mode (``shorten()`` for `--short`) filled in.
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

    /// The smaller counts of `--short` (CI mode: the whole run in about a minute).
    mutating func shorten() {
        events = 20_000
        singleCommits = 500
        eventsPerWriter = 20
        reads = 20_000
        syncEvents = 20_000
        liveCommits = 300
        liveSeconds = 1
        livePulls = 50
        pushClients = 8
        pushesPerClient = 10
        pullClients = 4
        pullPages = 3
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
