import EventStore
import EventSync

/// Live pulls: with automatic sync running on the client (its live pull waiting on a server),
/// another replica pushes one event at a time; each is timed from the push's acknowledgement to
/// the event's commit in the client's store.
struct LivePulls {
    /// Pushes timed per measurement.
    let count: Int
    /// The pushing replica's store.
    let writerPath: String
    /// The seed of the pushed changes (puts and patches of items the client holds).
    let seed: UInt64

    /// Starts `synchronizer`'s automatic sync, waits until it is up to date (its live pull
    /// waits from there), pushes ``count`` events one at a time through `transport`, and stops
    /// it. `round` varies the changes between measurements.
    func measure(_ synchronizer: Synchronizer, pushingTo transport: HTTPTransport, round: UInt64 = 0)
        async throws -> LatencySamples
    {
        let writer = try Store.open(at: writerPath)
        defer { writer.close() }
        let store = synchronizer.store
        var generator = Workload(events: count, seed: seed &+ round).makeGenerator()
        synchronizer.start()
        for await status in synchronizer.status where status.isUpToDate { break }
        var latencies = LatencySamples()
        for _ in 0..<count {
            var arrivals = store.changes(after: try store.head()).makeAsyncIterator()
            let events = try await writer.append(generator.next(1).map(EventStoreEngine.change))
            _ = try await transport.push(PushRequest(replica: writer.replicaID, events: events), check: nil)
            let start = monotonicNanoseconds()
            guard try await arrivals.next() != nil else {
                throw BenchError("the client store closed during a live pull")
            }
            latencies.record(monotonicNanoseconds() - start)
        }
        await synchronizer.stop()
        return latencies
    }
}

extension LatencySamples {
    /// Records p50 and p99 as `KEY.p50` and `KEY.p99`.
    func record(as key: String, into result: inout ChildResult) {
        result.figures[key + ".p50"] = percentile(50)
        result.figures[key + ".p99"] = percentile(99)
    }
}
