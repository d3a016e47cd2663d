import EventStore
import EventSync
import Foundation

/// Scenario 10, client side (the `sync` child with `--remote`, started by ``SyncBenchmark``):
/// a new store's first sync of the whole server log over HTTP, then incremental syncs of events
/// that another replica pushed.
///
/// Both stores are opened with the default configuration (durable commits, search on every
/// string field), as an application would, unless ``SyncTuning`` knobs are set. The figures are
/// this process's own: the server runs in the parent process.
struct SyncClient: Sendable {
    let context: BenchContext
    /// The server's base URL.
    let remote: String
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
                store: store, transport: transport, configuration: tuning.synchronizerConfiguration)
            var result = try await firstSync(synchronizer)
            if let description = tuning.description { result.notes["tuning"] = description }
            result.figures["sync.client.size"] = Double(fileSize(client + "/data.mdb")) / 1_048_576
            try await incrementalSyncs(synchronizer, writerPath: writer, into: &result)
            try await livePulls(synchronizer, writerPath: writer, into: &result)
            return result
        }
    }

    private var transport: HTTPTransport {
        HTTPTransport(baseURL: remote, token: SyncBenchmark.token, storeName: SyncBenchmark.storeName)
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
            "sync.first.seconds": seconds, "sync.first.rate": Double(expected) / seconds,
            "sync.first.rss.peak": memory.peak, "sync.first.rss.anon": memory.anonymous,
            "sync.first.cpu.user": cpu.user - cpuBefore.user, "sync.first.cpu.system": cpu.system - cpuBefore.system,
            "sync.first.written": written / Double(expected) / 1024, "sync.first.requests": Double(report.requests),
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
        let pushing = transport
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
        result.figures["sync.incremental.p50"] = latencies.percentile(50)
        result.figures["sync.incremental.p99"] = latencies.percentile(99)
    }

    /// With automatic sync running on the client (its live pull waiting on the server), another
    /// replica pushes one event at a time; timed from the push's acknowledgement to the event's
    /// commit in the client's store (p50, p99 of 100).
    private func livePulls(_ synchronizer: Synchronizer, writerPath: String, into result: inout ChildResult) async throws {
        let writer = try Store.open(at: writerPath)
        defer { writer.close() }
        let store = synchronizer.store
        let pushing = transport
        let updates = Workload(events: 100, seed: context.workload.seed &+ 2)
        var generator = updates.makeGenerator()
        synchronizer.start()
        // Wait for the first automatic sync: the live pull waits from there.
        for await status in synchronizer.status where status.isUpToDate { break }
        var latencies = LatencySamples()
        for _ in 0..<100 {
            var arrivals = store.changes(after: try store.head()).makeAsyncIterator()
            let events = try await writer.append(generator.next(1).map(EventStoreEngine.change))
            _ = try await pushing.push(PushRequest(replica: writer.replicaID, events: events), check: nil)
            let start = monotonicNanoseconds()
            guard try await arrivals.next() != nil else { throw BenchError("the client store closed during a live pull") }
            latencies.record(monotonicNanoseconds() - start)
        }
        await synchronizer.stop()
        result.figures["sync.live.p50"] = latencies.percentile(50)
        result.figures["sync.live.p99"] = latencies.percentile(99)
    }
}
