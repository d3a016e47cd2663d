import AsyncHTTPClient
import EventStore
import EventSync
import Foundation

/// The concurrent load of scenario 10, spread over one or several server instances (client `k`
/// talks to instance `k mod n`, as a load balancer would spread them):
///
/// - **Pushes**: ``Options/pushClients`` clients, each a replica of its own, push
///   ``Options/pushesPerClient`` batches of ``Options/pushEvents`` new events each, one push at
///   a time per client, all clients at once, into one store that they share or each into a store
///   of its own. Every push is acknowledged durably. The events are built, and each client's
///   first push (which creates the store and makes the client its replica's owner) is made,
///   before the clock starts.
/// - **Pulls**: ``Options/pullClients`` clients each pull ``Options/pullPages`` pages of up to
///   1,000 events (the server's largest page) of the seeded log, starting at different places,
///   one page at a time per client, all clients at once; the events are decoded as a client
///   decodes them, and nothing is written.
struct SyncLoad: Sendable {
    let options: Options
    /// The workload seed (each pushing client gets its own changes from it).
    let seed: UInt64
    /// The HTTP client, with a connection per concurrent client.
    let httpClient: HTTPClient

    /// What a push load measured.
    struct Pushes {
        var pushesPerSecond: Double
        var eventsPerSecond: Double
        /// Each push's round trip.
        var latencies: LatencySamples
    }

    /// Runs the push load against `instances`, into the store `storeName`, or with
    /// `storePerClient` into `storeName-K` for client `K`.
    func push(to instances: [String], storeName: String, storePerClient: Bool) async throws -> Pushes {
        let plans = (0..<options.pushClients).map { client in plan(client: client) }
        let transports = plans.indices.map { client in
            transport(instances[client % instances.count], storePerClient ? "\(storeName)-\(client)" : storeName)
        }
        _ = try await push(plans.map { [$0[0]] }, through: transports)
        let timed = plans.map { Array($0.dropFirst()) }
        let start = monotonicNanoseconds()
        let samples = try await push(timed, through: transports)
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        var latencies = LatencySamples()
        for sample in samples { latencies.record(sample) }
        let events = timed.reduce(0) { $0 + $1.reduce(0) { $0 + $1.events.count } }
        return Pushes(
            pushesPerSecond: Double(samples.count) / seconds, eventsPerSecond: Double(events) / seconds,
            latencies: latencies)
    }

    /// Client `K` pushes `plans[K]` one at a time through `transports[K]`, all clients at once;
    /// returns every push's round trip.
    private func push(_ plans: [[PushRequest]], through transports: [HTTPTransport]) async throws -> [UInt64] {
        try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for (requests, transport) in zip(plans, transports) {
                group.addTask {
                    var samples: [UInt64] = []
                    for request in requests {
                        let began = monotonicNanoseconds()
                        let response = try await transport.push(request, check: nil)
                        samples.append(monotonicNanoseconds() - began)
                        guard response.accepted == request.events.count else {
                            throw BenchError(
                                "a push load client got \(response.accepted) of \(request.events.count) accepted")
                        }
                    }
                    return samples
                }
            }
            return try await group.reduce(into: [UInt64]()) { $0 += $1 }
        }
    }

    /// Runs the pull load against `instances` on the store `storeName`, whose log has `head`
    /// events; returns the events pulled per second, all clients together.
    func pull(from instances: [String], storeName: String, head: UInt64) async throws -> Double {
        let clients = options.pullClients
        let pages = options.pullPages
        let start = monotonicNanoseconds()
        let pulled = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<clients {
                let transport = transport(instances[client % instances.count], storeName)
                group.addTask {
                    var after = head * UInt64(client) / UInt64(clients)
                    var pulled = 0
                    for _ in 0..<pages {
                        if after >= head { after = 0 }
                        let page = try await transport.pull(after: after, limit: SyncLimits().maxPageEvents, check: nil)
                        guard !page.events.isEmpty else { throw BenchError("a pull load client got an empty page") }
                        pulled += page.events.count
                        after = page.next
                    }
                    return pulled
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(pulled) / (Double(monotonicNanoseconds() - start) / 1e9)
    }

    private func transport(_ baseURL: String, _ storeName: String) -> HTTPTransport {
        HTTPTransport(baseURL: baseURL, token: SyncBenchmark.token, storeName: storeName, httpClient: httpClient)
    }

    /// The pushes of one client (``Options/pushesPerClient`` and the first, untimed one): its own
    /// replica id, events numbered from 1, stamped now, with
    /// the changes of a workload of its own.
    private func plan(client: Int) -> [PushRequest] {
        let replica = ReplicaID.random()
        let physical = UInt64(Date().timeIntervalSince1970 * 1000)
        let pushes = options.pushesPerClient + 1
        var generator = Workload(events: pushes * options.pushEvents, seed: seed &+ 100 &+ UInt64(client))
            .makeGenerator()
        var sequence: UInt64 = 0
        return (0..<pushes).map { _ in
            let events = generator.next(options.pushEvents).map { work in
                sequence += 1
                return Event(
                    id: EventID(origin: replica, sequence: sequence),
                    // Increasing stamps, 1,000 per millisecond from now (well within the skew bound).
                    hlc: HLCTimestamp(physical: physical + sequence / 1000, logical: UInt16(sequence % 1000)),
                    collection: Workload.collection, item: work.itemID, operation: SyncLoad.operation(work.operation),
                    fields: EventStoreEngine.fields(work))
            }
            return PushRequest(replica: replica, events: events)
        }
    }

    private static func operation(_ operation: Operation) -> EventOperation {
        switch operation {
        case .put: .put
        case .patch: .patch
        case .delete: .delete
        }
    }
}
