import EventStore
import EventSync
import Foundation
import Logging
import SyncServer

/// Scenario 10, server side (the `sync` child): seeds a server store with the workload, serves
/// it with the real ``SyncServer`` on a free loopback port, and runs ``SyncClient`` in a child
/// process of its own, so that the client's figures (peak RSS, CPU time, bytes written) are the
/// client's alone.
///
/// The store is seeded once per work directory (`sync-seed`) and copied into the server's data
/// directory before each run, so that `--repeat` does not seed again: the incremental rounds
/// push events into the served copy.
struct SyncBenchmark {
    /// The store's name on the server.
    static let storeName = "notes"
    /// The bearer token the server grants every store to.
    static let token = "bench-token"
    /// Events per seeding transaction (the engine's `maxBatchEvents`).
    static let seedBatch = 10_000

    let context: BenchContext

    func run() throws -> ChildResult {
        let events = context.workload.events
        var result = ChildResult()
        result.figures["sync.seed"] = try seedOnce()
        let dataDirectory = "\(context.directory)/sync-server"
        let manager = FileManager.default
        try? manager.removeItem(atPath: dataDirectory)
        try manager.createDirectory(
            atPath: "\(dataDirectory)/\(SyncBenchmark.storeName)", withIntermediateDirectories: true)
        try manager.copyItem(
            atPath: seedStore + "/data.mdb", toPath: "\(dataDirectory)/\(SyncBenchmark.storeName)/data.mdb")

        var configuration = SyncServer.Configuration(
            dataDirectory: dataDirectory, host: "127.0.0.1", port: 0,
            tokens: TokenTable([SyncBenchmark.token: .allStores]))
        configuration.storeConfiguration = SyncBenchmark.serverStoreConfiguration
        configuration.limits = SyncTuning.current.serverLimits
        configuration.logger = Logger(label: "evstore-bench.server", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let serving = Task.detached { try await server.run() }
        defer {
            serving.cancel()
            _ = try? runBlocking { try await serving.value }
        }
        let port = try runBlocking { try await server.waitUntilRunning() }

        let cpuBefore = ProcessStats.cpuSeconds()
        let client = try ChildProcess.run(
            ChildTask(scenario: .sync, engine: .eventstore), events: events, options: context.options,
            workdir: context.options.workdir ?? "", extraArguments: ["--remote", "http://127.0.0.1:\(port)"])
        result.figures["sync.server.cpu"] = ProcessStats.cpuSeconds() - cpuBefore
        for (key, value) in client.figures where key.hasPrefix("sync.") { result.figures[key] = value }
        result.notes = client.notes
        return result
    }

    /// The server's store configuration: the defaults (durable, search on every string field),
    /// plus the log-digest projection the sync service keeps.
    static var serverStoreConfiguration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.projections = SyncService.requiredProjections
        return configuration
    }

    private var seedStore: String { "\(context.directory)/sync-seed/\(SyncBenchmark.storeName)" }
    private var seedMarker: String { "\(context.directory)/sync-seed/complete" }

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
