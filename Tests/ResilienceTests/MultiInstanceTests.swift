import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import SyncPostgres
import SyncTestSupport
import Synchronization
import Testing

/// Several `evstore serve` processes on one PostgreSQL database: clients spread over them, one
/// killed with SIGKILL mid-run; the clients carry on through the other, nothing acknowledged is
/// lost, and everyone converges on one dense log.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct MultiInstanceTests {
    static let token = "multi-instance-token"

    @Test(
        "2 server processes on one PostgreSQL, 50 clients over both, one killed with SIGKILL mid-run: nothing lost, all converge"
    )
    func twoInstancesOneKilled() async throws {
        let directory = TemporaryDirectory(prefix: "two-instances")
        defer { directory.remove() }
        let database = try await TestPostgres.freshDatabase()
        let tokens = directory.appending("tokens")
        try "\(MultiInstanceTests.token) *\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        var instances: [(process: ChildProcess, baseURL: String)] = []
        for _ in 0..<2 {
            let process = try ChildProcess(
                ["serve", "--postgres", TestPostgres.url(of: database), "--port", "0", "--tokens", tokens],
                executable: builtExecutable(named: "evstore"))
            var port: Int?
            _ = await process.waitForLine(timeout: .seconds(60)) { line in
                port = line.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/).flatMap { Int($0.1) }
                return port != nil
            }
            guard let port else { throw SyncError(.local, "evstore serve did not start: \(process.errorText)") }
            instances.append((process, "http://127.0.0.1:\(port)"))
        }
        defer { for instance in instances { instance.process.killNow() } }
        let first = instances[0].process

        let clientCount = Reliability.count(ci: 50, long: 200)
        let rounds = 6
        let clients = try (0..<clientCount).map { index in
            try Store.open(at: directory.appending("client-\(index)"))
        }
        defer { for client in clients { client.close() } }
        // Each client talks to one instance, and to the other when that one is gone (as a load
        // balancer would send it).
        let synchronizers = clients.enumerated().map { index, client in
            Synchronizer(
                store: client,
                transport: FailoverTransport([instances[index % 2].baseURL, instances[(index + 1) % 2].baseURL]))
        }
        let tally = Tally()

        func round(_ number: Int) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        let events = try await client.append([
                            .put(
                                "notes", id: "c\(index)-r\(number)",
                                fields: ["title": "client \(index) round \(number)"]),
                            .patch("notes", id: "shared-\(number % 3)", fields: ["by": .int(Int64(index))]),
                        ])
                        do {
                            _ = try await synchronizers[index].sync()
                            // Once a sync succeeds, the server acknowledged every event made before it.
                            tally.acknowledged.withLock { $0.formUnion(events.map(\.id)) }
                        } catch {
                            tally.failedSyncs.add(1, ordering: .relaxed)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }

        for number in 0..<rounds {
            if number == 2 {
                // Kill instance 0 while this round's pushes are in flight.
                let killer = Task {
                    try await Task.sleep(for: .milliseconds(30))
                    first.killNow()
                }
                try await round(number)
                try await killer.value
            } else {
                try await round(number)
            }
        }
        #expect(!instances[0].process.process.isRunning)

        // Everyone syncs until it has pushed everything and pulled everyone else's events.
        for _ in 0..<2 {
            for (index, synchronizer) in synchronizers.enumerated() {
                var attempts = 0
                while true {
                    do {
                        _ = try await synchronizer.sync()
                        break
                    } catch {
                        attempts += 1
                        guard attempts < 5 else { throw error }
                        _ = index
                    }
                }
            }
        }

        let survivor = HTTPTransport(baseURL: instances[1].baseURL, token: MultiInstanceTests.token, storeName: "notes")
        var log: [Event] = []
        var after: UInt64 = 0
        while true {
            let page = try await survivor.pull(after: after, limit: 1000, check: nil)
            log += page.events
            after = page.next
            if page.next >= page.head { break }
        }
        let logIDs = Set(log.map(\.id))
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "the server's log has gaps or is out of order")
        #expect(logIDs.count == log.count, "the server's log holds an event twice")
        let missing = tally.acknowledged.withLock { $0 }.subtracting(logIDs)
        #expect(missing.isEmpty, "\(missing.count) acknowledged events are missing")
        var written: Set<EventID> = []
        for client in clients { written.formUnion(try eventIDs(of: client).filter { $0.origin == client.replicaID }) }
        #expect(written == logIDs, "the log differs from what the clients wrote")
        let reference = try StoreSnapshot(clients[0])
        for (index, client) in clients.enumerated() {
            #expect(Set(try eventIDs(of: client)) == logIDs, "client \(index) does not hold the whole log")
            #expect(try StoreSnapshot(client) == reference, "client \(index) diverged")
        }
        print(
            "two instances: \(clientCount) clients × \(rounds) rounds, \(log.count) events, "
                + "\(tally.acknowledged.withLock { $0.count }) acknowledged before the end, "
                + "\(tally.failedSyncs.load(ordering: .relaxed)) syncs failed around the kill")
    }
}

/// What the clients' syncs acknowledged, and how many failed.
private final class Tally: Sendable {
    let acknowledged = Mutex<Set<EventID>>([])
    let failedSyncs = Atomic(0)
}

/// Sends each call to the first server that answers: on a transport failure or a 503 it moves on
/// to the next one for this call and the later ones.
final class FailoverTransport: SyncTransport, @unchecked Sendable {
    private let transports: [HTTPTransport]
    private let current = Mutex(0)

    init(_ baseURLs: [String]) {
        transports = baseURLs.map { HTTPTransport(baseURL: $0, token: MultiInstanceTests.token, storeName: "notes") }
    }

    var remoteIdentifier: String { transports[0].remoteIdentifier }

    private func attempt<T>(_ call: (HTTPTransport) async throws -> T) async throws -> T {
        let start = current.withLock { $0 }
        var lastError: (any Error)?
        for offset in 0..<transports.count {
            let index = (start + offset) % transports.count
            do {
                let result = try await call(transports[index])
                current.withLock { $0 = index }
                return result
            } catch let error as SyncError where error.code == .transport || error.code == .unavailable {
                lastError = error
            }
        }
        throw lastError!
    }

    func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
        try await attempt { try await $0.info(check: check, replica: replica) }
    }

    func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
        try await attempt { try await $0.push(request, check: check) }
    }

    func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
        try await attempt { try await $0.pull(after: after, limit: limit, check: check) }
    }
}
