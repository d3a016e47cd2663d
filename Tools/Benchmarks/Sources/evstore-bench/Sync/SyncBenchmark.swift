import EventStore
import EventSync
import EventSyncService
import Foundation
import Logging
import SyncPostgres
import SyncServer

/// Scenario 10, server side (the `sync` child, once per backend): seeds a server store with the
/// workload, serves it with the real ``SyncServer`` on free loopback ports, and runs
/// ``SyncClient`` in a child process of its own, so that the client's figures (peak RSS, CPU
/// time, bytes written) are the client's alone.
///
/// - LMDB: one server on a copy of the seed store (the store is seeded once per work directory,
///   in `sync-seed`, and copied into the server's data directory before each run, so that
///   `--repeat` does not seed again: the incremental rounds push events into the served copy).
/// - PostgreSQL: the seed store's events are pushed into a new store of the database (a new name
///   each run), then **two** servers serve that database, each with its own connection pool, for
///   the client's two-instance measurements.
///
/// Every figure is returned under `sync.<backend>.`.
struct SyncBenchmark {
    /// The store's name on the server (on PostgreSQL, with a suffix of the run).
    static let storeName = "notes"
    /// The bearer token the server grants every store to.
    static let token = "bench-token"
    /// Events per seeding transaction (the engine's `maxBatchEvents`).
    static let seedBatch = 10_000

    let context: BenchContext
    let backend: ServerBackend

    func run() throws -> ChildResult {
        var figures: [String: Double] = [:]
        var notes: [String: String] = [:]
        let seedRate = try seedOnce()
        let storeName: String
        let backends: [SyncBackend]
        var probe: PostgresProbe?
        switch backend {
        case .lmdb:
            storeName = SyncBenchmark.storeName
            backends = [.lmdb(dataDirectory: try copySeedStore())]
            figures["seed"] = seedRate
            figures["server.size"] = Double(fileSize(seedStore + "/data.mdb")) / 1_048_576
        case .postgres:
            guard let url = context.options.postgres else {
                throw BenchError("the PostgreSQL backend needs --postgres URL")
            }
            let database = try PostgresBackend(url: url)
            // A new store each run, so that a database kept between runs never mixes them.
            storeName = SyncBenchmark.storeName + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
            probe = PostgresProbe.open(database)
            for (name, value) in try probe?.settings() ?? [:] { notes["postgres.\(name)"] = value }
            let sizeBefore = try probe?.databaseBytes()
            figures["seed.pushed"] = try PostgresSeeder(seedStore: seedStore, database: database).seed(into: storeName)
            if let sizeBefore, let sizeAfter = try probe?.databaseBytes() {
                figures["server.size"] = (sizeAfter - sizeBefore) / 1_048_576
            }
            // Two instances on one database: the client's two-instance measurements use both.
            backends = [.postgres(database), .postgres(database)]
        }
        defer { probe?.close() }
        let servers = try RunningServers(backends.map(serverConfiguration))
        defer { servers.stop() }

        let timeline = CPUTimeline(database: probe)
        let client = try ChildProcess.run(
            ChildTask(scenario: .sync, engine: .eventstore, backend: backend), events: context.workload.events,
            options: context.options, workdir: context.options.workdir ?? "",
            extraArguments: ["--remote", servers.urls.joined(separator: ","), "--store", storeName])
        timeline.stop()
        // The client times its first sync on the system-wide monotonic clock: what the servers
        // and the database spent meanwhile.
        if let start = client.figures["first.start"], let end = client.figures["first.end"] {
            let cpu = timeline.cpu(from: UInt64(start), to: UInt64(end))
            figures["first.server.cpu"] = cpu.process
            figures["first.database.cpu"] = cpu.database
        }
        // The client process's own rss.* and io.* figures are the harness's, not the scenario's.
        for (key, value) in client.figures
        where !key.hasPrefix("rss.") && !key.hasPrefix("io.") && key != "first.start" && key != "first.end" {
            figures[key] = value
        }
        var result = ChildResult(notes: client.notes.merging(notes) { $1 })
        for (key, value) in figures { result.figures["sync.\(backend.rawValue).\(key)"] = value }
        return result
    }

    /// A server on `backend`: a free port of 127.0.0.1, the benchmark's token, the scenario's
    /// store configuration and limits, no logging.
    private func serverConfiguration(_ backend: SyncBackend) -> SyncServer.Configuration {
        var configuration = SyncServer.Configuration(
            backend: backend, host: "127.0.0.1", port: 0, tokens: TokenTable([SyncBenchmark.token: .allStores]))
        configuration.storeConfiguration = SyncBenchmark.serverStoreConfiguration
        configuration.limits = SyncTuning.current.serverLimits
        configuration.logger = Logger(label: "evstore-bench.server", factory: { _ in SwiftLogNoOpLogHandler() })
        return configuration
    }

    /// The server's store configuration: the defaults (durable, search on every string field),
    /// plus the log-digest projection the sync service keeps.
    static var serverStoreConfiguration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.projections = SyncService.requiredProjections
        return configuration
    }

    // MARK: The LMDB seed store

    private var seedStore: String { "\(context.directory)/sync-seed/\(SyncBenchmark.storeName)" }
    private var seedMarker: String { "\(context.directory)/sync-seed/complete" }

    /// Copies the seed store into a new data directory for the LMDB server; returns the directory.
    private func copySeedStore() throws -> String {
        let dataDirectory = "\(context.directory)/sync-server"
        let manager = FileManager.default
        try? manager.removeItem(atPath: dataDirectory)
        try manager.createDirectory(
            atPath: "\(dataDirectory)/\(SyncBenchmark.storeName)", withIntermediateDirectories: true)
        try manager.copyItem(
            atPath: seedStore + "/data.mdb", toPath: "\(dataDirectory)/\(SyncBenchmark.storeName)/data.mdb")
        return dataDirectory
    }

    /// Writes the workload into the seed store, unless an earlier run of this work directory did;
    /// returns the seeding rate (events/s), kept in the marker file.
    private func seedOnce() throws -> Double {
        if let text = try? String(contentsOfFile: seedMarker, encoding: .utf8),
            let rate = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return rate
        }
        context.removeStore(seedStore)
        try? FileManager.default.removeItem(atPath: seedStore)
        let rate = try seed(into: seedStore)
        try String(rate).write(toFile: seedMarker, atomically: true, encoding: .utf8)
        log(
            String(
                format: "  sync: seeded the server store with %d events at %.0f events/s", context.workload.events, rate
            ))
        return rate
    }

    /// Appends the whole workload in batches of ``seedBatch`` with `bulk` durability (one flush
    /// at the end), through the same configuration the server opens the store with.
    private func seed(into path: String) throws -> Double {
        var configuration = SyncBenchmark.serverStoreConfiguration
        configuration.durability = .bulk
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        var generator = context.workload.makeGenerator()
        var watch = Stopwatch()
        while true {
            let batch = generator.next(SyncBenchmark.seedBatch)
            if batch.isEmpty { break }
            let changes = batch.map(EventStoreEngine.change)
            try watch.measure { _ = try store.append(changes) }
        }
        try watch.measure { try store.sync() }
        guard try store.head() == UInt64(generator.produced) else {
            throw BenchError("the seed store holds \(try store.head()) events, expected \(generator.produced)")
        }
        return watch.rate(generator.produced)
    }
}
