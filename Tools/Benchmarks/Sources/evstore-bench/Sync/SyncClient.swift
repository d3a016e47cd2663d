import AsyncHTTPClient
import EventStore
import EventSync
import Foundation

/// Scenario 10, client side (the `sync` child with `--remote`, started by ``SyncBenchmark``):
/// a new store's first sync of the whole server log over HTTP, incremental syncs of events that
/// another replica pushed, live pulls, then the concurrent load of ``SyncLoad``. With two
/// remotes (two server instances on one PostgreSQL database), also the live pull across
/// instances and the load spread over both.
///
/// Both stores are opened with the default configuration (durable commits, search on every
/// string field), as an application would, unless ``SyncTuning`` knobs are set. The figures are
/// this process's own: the servers run in the parent process.
struct SyncClient: Sendable {
    let context: BenchContext
    let backend: ServerBackend
    /// The servers' base URLs: one instance, or two on one database.
    let remotes: [String]
    /// The store's name on the servers.
    let storeName: String
    /// The sampler of this process's memory.
    let sampler: MemorySampler

    func run() throws -> ChildResult {
        let client = "\(context.directory)/sync-client"
        let writer = "\(context.directory)/sync-writer"
        for path in [client, writer] { try? FileManager.default.removeItem(atPath: path) }
        return try runBlocking { [self] in
            let tuning = SyncTuning.current
            let store = try Store.open(at: client, configuration: tuning.clientStoreConfiguration)
            defer { store.close() }
            let synchronizer = Synchronizer(
                store: store, transport: transport(0), configuration: tuning.synchronizerConfiguration)
            var result = try await firstSync(synchronizer)
            if let description = tuning.description { result.notes["tuning"] = description }
            result.figures["client.size"] = Double(fileSize(client + "/data.mdb")) / 1_048_576
            try await incrementalSyncs(synchronizer, writerPath: writer, into: &result)
            // The push and the waiting pull on one instance, then (two instances) on different ones.
            let live = LivePulls(count: context.options.livePulls, writerPath: writer, seed: context.workload.seed &+ 2)
            try await live.measure(synchronizer, pushingTo: transport(0)).record(as: "live", into: &result)
            if remotes.count > 1 {
                // The same cursor (remote name): a load balancer's client does not know which
                // instance answers.
                let across = Synchronizer(
                    store: store, transport: transport(1), remoteName: synchronizer.remoteName,
                    configuration: tuning.synchronizerConfiguration)
                try await live.measure(across, pushingTo: transport(0), round: 1).record(
                    as: "live.across", into: &result)
            }
            try await runLoad(head: try store.head(), into: &result)
            return result
        }
    }

    /// The transport to the server instance `index`, on the shared HTTP client.
    private func transport(_ index: Int) -> HTTPTransport {
        HTTPTransport(baseURL: remotes[index], token: SyncBenchmark.token, storeName: storeName)
    }

    /// The concurrent pushes and pulls on one instance, then (two instances) spread over both.
    private func runLoad(head: UInt64, into result: inout ChildResult) async throws {
        var configuration = HTTPClient.Configuration()
        // One connection per concurrent client: the default pool (8 per host) would queue them.
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit =
            max(context.options.pushClients, context.options.pullClients) + 2
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let load = SyncLoad(options: context.options, seed: context.workload.seed, httpClient: http)
            let instanceCounts = remotes.count > 1 ? [1, 2] : [1]
            for instances in instanceCounts {
                let servers = Array(remotes.prefix(instances))
                // One store that every client pushes to, then a store per client.
                for (storePerClient, key) in [(false, "push.\(instances)"), (true, "push.\(instances).stores")] {
                    let pushes = try await load.push(
                        to: servers, storeName: "\(storeName)-\(key)", storePerClient: storePerClient)
                    result.figures[key + ".rate"] = pushes.pushesPerSecond
                    result.figures[key + ".events"] = pushes.eventsPerSecond
                    pushes.latencies.record(as: key, into: &result)
                }
                result.figures["pull.\(instances).rate"] = try await load.pull(
                    from: servers, storeName: storeName, head: head)
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// Pulls the whole server log into the new store: events/s, seconds, and this process's
    /// peak RSS, CPU time and bytes written up to the end of it.
    private func firstSync(_ synchronizer: Synchronizer) async throws -> ChildResult {
        let expected = context.workload.events
        let cpuBefore = ProcessStats.cpuTimes()
        let writtenBefore = ProcessStats.writtenBytes() ?? 0
        let start = monotonicNanoseconds()
        let report = try await synchronizer.sync()
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = ProcessStats.cpuTimes()
        let written = (ProcessStats.writtenBytes() ?? 0) - writtenBefore
        let memory = sampler.current()
        guard report.pulled == expected, try synchronizer.store.head() == UInt64(expected) else {
            throw BenchError("the first sync pulled \(report.pulled) events, expected \(expected)")
        }
        return ChildResult(figures: [
            "first.start": Double(start), "first.end": Double(start) + seconds * 1e9,
            "first.seconds": seconds, "first.rate": Double(expected) / seconds,
            "first.rss.peak": memory.peak, "first.rss.anon": memory.anonymous,
            "first.cpu.user": cpu.user - cpuBefore.user, "first.cpu.system": cpu.system - cpuBefore.system,
            "first.written": written / Double(expected) / 1024, "first.requests": Double(report.requests),
        ])
    }

    /// Each round, another replica appends events and pushes them; the client's sync that pulls
    /// them is timed (p50, p99).
    private func incrementalSyncs(_ synchronizer: Synchronizer, writerPath: String, into result: inout ChildResult)
        async throws
    {
        let options = context.options
        let writer = try Store.open(at: writerPath)
        defer { writer.close() }
        // Another workload (another seed) over the first items of this one: puts and patches of
        // items the client holds, so the pulls merge into existing items.
        let updates = Workload(events: options.syncRounds * options.syncRoundEvents, seed: context.workload.seed &+ 1)
        var generator = updates.makeGenerator()
        let pushing = transport(0)
        var latencies = LatencySamples()
        for _ in 0..<options.syncRounds {
            let events = try await writer.append(generator.next(options.syncRoundEvents).map(EventStoreEngine.change))
            let pushed = try await pushing.push(PushRequest(replica: writer.replicaID, events: events), check: nil)
            guard pushed.accepted == events.count else {
                throw BenchError("the server accepted \(pushed.accepted) of \(events.count) pushed events")
            }
            let start = monotonicNanoseconds()
            let report = try await synchronizer.sync()
            latencies.record(monotonicNanoseconds() - start)
            guard report.pulled == events.count else {
                throw BenchError("an incremental sync pulled \(report.pulled) events, expected \(events.count)")
            }
        }
        latencies.record(as: "incremental", into: &result)
    }
}
