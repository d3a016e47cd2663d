import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import SyncTestSupport
import Synchronization
import Testing

/// Many clients pushing and pulling against one server at once.
@Suite("Load", .serialized)
struct LoadTests {
    @Test(
        "50 concurrent clients push and pull: no errors, nothing lost or duplicated, all converge",
        arguments: TestBackend.all)
    func concurrentClients(backend: TestBackend) async throws {
        let directory = TemporaryDirectory(prefix: "load")
        defer { directory.remove() }
        let server = try await ServerHarness(dataDirectory: directory.appending("server"), backend: backend)
        let clients = Reliability.count(ci: 50, long: 200)
        let rounds = Reliability.count(ci: 4, long: 20)
        let eventsPerRound = 5
        var stores: [Store] = []
        for index in 0..<clients {
            var configuration = Store.Configuration()
            configuration.durability = .relaxed
            stores.append(try Store.open(at: directory.appending("client-\(index)"), configuration: configuration))
        }
        let latencies = Recorder<Duration>()
        let failures = Recorder<String>()
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    // The 50 clients share one HTTP client's 8 connections, and in the full suite
                    // two cores with everything else: a request waits behind the others' (sync
                    // latencies of over 100 s at p99 there, under a second alone). What this test
                    // judges is errors, losses and convergence, not latency.
                    let synchronizer = Synchronizer(
                        store: store,
                        transport: HTTPTransport(
                            baseURL: server.baseURL, token: ServerHarness.notesToken, storeName: "notes",
                            timeout: .seconds(300)),
                        remoteName: "server")
                    for round in 0..<rounds {
                        var changes: [Change] = []
                        for event in 0..<eventsPerRound {
                            // Half the writes hit shared items, to make conflicts.
                            let id = event % 2 == 0 ? "shared-\(event)" : "c\(index)-r\(round)-e\(event)"
                            changes.append(
                                .put(
                                    "notes", id: id,
                                    fields: ["title": .string("alpha \(index) \(round)"), "by": .int(Int64(index))]))
                        }
                        _ = try await store.append(changes)
                        let begin = ContinuousClock.now
                        do {
                            try await synchronizer.sync()
                        } catch {
                            failures.append("client \(index) round \(round): \(error)")
                        }
                        let elapsed = ContinuousClock.now - begin
                        latencies.append(elapsed)
                    }
                }
            }
            try await group.waitForAll()
        }
        let loadTime = ContinuousClock.now - started
        #expect(failures.values.isEmpty, "\(failures.values.prefix(5))")

        // Final round: everyone pulls what the others pushed last.
        for store in stores {
            try await Synchronizer(
                store: store,
                transport: HTTPTransport(baseURL: server.baseURL, token: ServerHarness.notesToken, storeName: "notes"),
                remoteName: "server"
            ).sync()
        }
        let total = clients * rounds * eventsPerRound
        #expect(try await server.head(of: "notes") == UInt64(total))
        var reference: StoreSnapshot?
        var referenceIDs: Set<EventID>?
        for (index, store) in stores.enumerated() {
            let events = try allEvents(of: store)
            let ids = Set(events.map(\.id))
            #expect(events.count == total, "client \(index) holds \(events.count) events, expected \(total)")
            #expect(ids.count == events.count, "client \(index) holds duplicates")
            let snapshot = try StoreSnapshot(store)
            if let reference, let referenceIDs {
                #expect(snapshot == reference, "client \(index) diverged")
                #expect(ids == referenceIDs)
            } else {
                reference = snapshot
                referenceIDs = ids
            }
        }
        let sorted = latencies.values.sorted()
        let p50 = sorted[sorted.count / 2]
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        let seconds = Double(loadTime.components.seconds) + Double(loadTime.components.attoseconds) / 1e18
        print(
            "load (\(backend)): \(clients) clients × \(rounds) rounds, \(total) events pushed and fanned out to every client in \(loadTime); "
                + "\(String(format: "%.0f", Double(total) / seconds)) events/s pushed, "
                + "\(String(format: "%.1f", Double(sorted.count) / seconds)) syncs/s; sync latency p50 \(p50), p99 \(p99)"
        )
        for store in stores { store.close() }
        try await server.stop()
    }
}

/// A thread-safe list.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var values: [Element] { storage.withLock { $0 } }
}
