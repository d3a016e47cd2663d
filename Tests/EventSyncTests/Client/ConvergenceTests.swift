import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import SyncServer
import SyncTestSupport
import Testing

/// Seeded random scenarios: 3–5 replicas with skewed clocks edit shared items offline, sync in
/// random order through transports that fail before or after random calls (cut pushes, pages
/// fetched but not ingested), with duplicate pushes; after a final round of syncs, every replica
/// and the server hold identical items and search results.
struct ConvergenceTests {
    @Test(arguments: 0..<200)
    func randomScenarioConvergesInProcess(seed: Int) async throws {
        let cluster = try SyncCluster(serverSkew: Int64(seed % 41 - 20) * 1000)
        defer { cluster.close() }
        try await Self.run(seed: UInt64(seed), cluster: cluster) {
            cluster.transport(encodesJSON: seed % 5 == 0)
        }
        try Self.expectConverged(cluster, server: try await cluster.serverStore(), seed: seed)
    }

    @Test(arguments: 1000..<1006)
    func randomScenarioConvergesOverHTTP(seed: Int) async throws {
        let cluster = try SyncCluster(serverSkew: -15_000)
        defer { cluster.close() }
        cluster.stopServer()
        var configuration = SyncServer.Configuration(
            dataDirectory: cluster.serverPath, tokens: TokenTable(["t": .stores([cluster.storeName])]))
        configuration.storeConfiguration.durability = .bulk
        configuration.storeConfiguration.physicalClock = cluster.serverClock.function
        let running = try await RunningServer(configuration)
        do {
            try await Self.run(seed: UInt64(seed), cluster: cluster) {
                HTTPTransport(baseURL: running.baseURL, token: "t", storeName: cluster.storeName)
            }
            let server = try Store.open(at: cluster.serverPath + "/" + cluster.storeName)
            try Self.expectConverged(cluster, server: server, seed: seed)
        } catch {
            try await running.stop()
            throw error
        }
        try await running.stop()
    }

    static let titles = ["alpha beta", "gamma delta", "동기화를 했다", "alphabet soup", "beta", "Alpha gamma"]
    static let words = ["alpha", "beta", "gamma", "delta", "동기화", "offline", "sync"]
    static let tags = ["work", "home", "urgent"]

    static func randomFields(_ generator: inout SeededGenerator, minimum: Int) -> [String: Value] {
        var fields: [String: Value] = [:]
        while fields.count < minimum || Int.random(in: 0..<3, using: &generator) > 0 {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: fields["title"] = .string(titles.randomElement(using: &generator)!)
            case 1:
                let count = Int.random(in: 1...4, using: &generator)
                fields["content"] = .string(
                    (0..<count).map { _ in words.randomElement(using: &generator)! }.joined(separator: " "))
            case 2: fields["tags"] = .array(tags.filter { _ in Bool.random(using: &generator) }.map(Value.string))
            case 3: fields["rank"] = .int(Int64.random(in: -5...5, using: &generator))
            case 4: fields["score"] = .double(Double(Int.random(in: 0...8, using: &generator)) / 4)
            default:
                fields["meta"] = .object([
                    "n": .int(Int64.random(in: 0...3, using: &generator)), "ok": .bool(Bool.random(using: &generator)),
                ])
            }
            if fields.count >= 4 { break }
        }
        return fields
    }

    static func run(seed: UInt64, cluster: SyncCluster, transport: () -> any SyncTransport) async throws {
        var generator = SeededGenerator(seed: seed &* 0x9E37_79B9 &+ 17)
        let replicaCount = 3 + Int(seed % 3)
        for _ in 0..<replicaCount {
            try cluster.addReplica(skew: Int64.random(in: -20_000...20_000, using: &generator))
        }
        let collections = ["notes", "tasks"]
        let items = (0..<5).map { "item-\($0)" }

        func synchronizer(_ index: Int, faulty: FaultyTransport? = nil) -> Synchronizer {
            var configuration = Synchronizer.Configuration()
            configuration.pushPageSize = Int.random(in: 1...6, using: &generator)
            configuration.pullPageSize = Int.random(in: 1...8, using: &generator)
            return cluster.synchronizer(index, transport: faulty ?? transport(), configuration: configuration)
        }

        for _ in 0..<60 {
            cluster.advance(by: Int64.random(in: 0...1_500, using: &generator))
            let replica = Int.random(in: 0..<replicaCount, using: &generator)
            let store = cluster.replicas[replica]
            switch Int.random(in: 0..<12, using: &generator) {
            case 0..<7:
                let collection = collections.randomElement(using: &generator)!
                let item = items.randomElement(using: &generator)!
                let change: Change
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4: change = .put(collection, id: item, fields: randomFields(&generator, minimum: 0))
                case 4..<8: change = .patch(collection, id: item, fields: randomFields(&generator, minimum: 1))
                default: change = .delete(collection, id: item)
                }
                try await store.append([change])
            case 7..<11:
                let faulty = FaultyTransport(transport())
                if Int.random(in: 0..<10, using: &generator) < 4 {
                    faulty.fail(
                        call: Int.random(in: 0..<5, using: &generator),
                        Bool.random(using: &generator) ? .before : .after)
                }
                do {
                    try await synchronizer(replica, faulty: faulty).sync()
                } catch let error as SyncError where error.code == .transport {
                    // An injected cut; the next sync resumes.
                }
            default:
                // A duplicate push of a random run of one replica's events from the log.
                let head = try store.head()
                guard head > 0 else { continue }
                let from = UInt64.random(in: 1...head, using: &generator)
                let events = try store.read { reader in
                    var events: [Event] = []
                    try reader.forEachEvent(from: from) { event in
                        // A push carries one replica's events (its own, or relayed).
                        if let first = events.first, first.id.origin != event.id.origin { return false }
                        events.append(event)
                        return events.count < 4
                    }
                    return events
                }
                let origin = events[0].id.origin
                let request = PushRequest(replica: origin, events: events, relay: origin != store.replicaID)
                let first = try await transport().push(request, check: nil)
                let second = try await transport().push(request, check: nil)
                #expect(second.accepted == 0 && second.duplicates == events.count)
                #expect(second.head == first.head)
            }
        }
        for _ in 0..<2 {
            for index in 0..<replicaCount { try await synchronizer(index).sync() }
        }
    }

    static func expectConverged(_ cluster: SyncCluster, server: Store, seed: Int) throws {
        let expected = try StoreSnapshot(server)
        let serverIDs = try eventIDs(of: server)
        #expect(!serverIDs.isEmpty && !expected.items.isEmpty, "seed \(seed): an empty scenario")
        #expect(Set(serverIDs).count == serverIDs.count, "seed \(seed): the server log holds a duplicate")
        for (index, store) in cluster.replicas.enumerated() {
            let snapshot = try StoreSnapshot(store)
            #expect(snapshot == expected, "seed \(seed), replica \(index):\n\(snapshot)\n--- server:\n\(expected)")
            let ids = try eventIDs(of: store)
            #expect(Set(ids).count == ids.count, "seed \(seed), replica \(index): duplicate in the log")
            #expect(Set(ids) == Set(serverIDs), "seed \(seed), replica \(index): different events")
            #expect(try store.read { try $0.metadata(forKey: "sync.remote.server") } != nil)
        }
    }
}
