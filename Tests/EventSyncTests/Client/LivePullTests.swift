import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Testing

/// Live pulls in the service: waits bounded by their duration, answered by a commit.
struct ServiceLivePullTests {
    @Test func aPullWaitsForTheNextCommitAndNoLonger() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 2)
        try await cluster.synchronizer(0).sync()
        // A pull that ignored the commit would return only after its whole 25 s wait. That tells
        // the two apart only when the commit itself came well before then: inside a starved CI
        // run a commit once took 23 s, so such a round proves nothing and is run again.
        var after: UInt64 = 2
        var conclusive = false
        for round in 0..<3 where !conclusive {
            let started = ContinuousClock.now
            let waiting = Task { [after] in
                try await cluster.service.pull(store: cluster.storeName, after: after, wait: .seconds(25))
            }
            try await Task.sleep(for: .milliseconds(100))
            try await appendNotes(client, count: 1, prefix: "later\(round)-")
            try await cluster.synchronizer(0).sync()
            let committed = ContinuousClock.now - started
            let page = try await waiting.value
            let answered = ContinuousClock.now - started
            #expect(page.events.map(\.item) == ["later\(round)-0"])
            after = page.head
            guard committed < .seconds(15) else { continue }
            conclusive = true
            #expect(answered < .seconds(25), "answered after \(answered), the commit came after \(committed)")
        }
        #expect(conclusive, "every round's commit took 15 s or more: the machine is too starved to tell")

        let quiet = try await cluster.service.pull(store: cluster.storeName, after: after, wait: .milliseconds(300))
        #expect(quiet.events.isEmpty && quiet.head == after)
        await #expect(throws: SyncError.self) {
            _ = try await cluster.service.pull(store: cluster.storeName, after: 0, wait: .seconds(26))
        }
    }

    @Test func aServerBoundsLivePullsByItsOwnLimit() async throws {
        let directory = TemporaryDirectory(prefix: "live-pull-limit")
        defer { directory.remove() }
        var configuration = SyncService.Configuration(dataDirectory: directory.appending("data"))
        configuration.pullWaitLimit = .milliseconds(200)
        let service = try SyncService(configuration: configuration)
        defer { service.close() }
        let store = try Store.open(at: directory.appending("client"))
        defer { store.close() }
        try await appendNotes(store, count: 1)
        try await Synchronizer(store: store, transport: InProcessTransport(service: service, storeName: "notes")).sync()
        // What the storage is asked: the server's 200 ms bound, not the 25 s asked for. (Timing
        // the pull cannot tell: inside the parallel test run on a starved machine it took 12 s,
        // 23 s and 25.9 s, since the bounded wait itself waits for a thread.)
        let request = try service.pageRequest(after: 1, limit: nil, check: nil, wait: .seconds(25), keepEvents: true)
        #expect(request.wait == .milliseconds(200))
        #expect(
            try service.pageRequest(after: 1, limit: nil, check: nil, wait: .milliseconds(50), keepEvents: true).wait
                == .milliseconds(50))
        let page = try await service.pull(store: "notes", after: 1, wait: .seconds(25))
        #expect(page.events.isEmpty && page.head == 1)
    }

    /// A graceful shutdown's first step: the pulls waiting answer at once with what the store
    /// holds, and later pulls do not wait, on either backend (on PostgreSQL the page is still
    /// read: the wait ends, the request is not cancelled).
    @Test(arguments: TestBackend.all) func endingLiveWaitsAnswersEveryPullAtOnce(backend: TestBackend) async throws {
        let directory = TemporaryDirectory(prefix: "live-pull-end")
        defer { directory.remove() }
        let service = try SyncService(
            configuration: .init(backend: try await backend.make(dataDirectory: directory.appending("data"))))
        defer { service.close() }
        let store = try Store.open(at: directory.appending("client"))
        defer { store.close() }
        try await appendNotes(store, count: 2)
        try await Synchronizer(store: store, transport: InProcessTransport(service: service, storeName: "notes")).sync()

        let (elapsed, lateness) = try await measuringTimerLateness {
            let waiting = (0..<3).map { _ in
                Task { try await service.pull(store: "notes", after: 2, wait: .seconds(25)) }
            }
            try await Task.sleep(for: .milliseconds(200))
            service.endLiveWaits()
            for pull in waiting {
                let page = try await pull.value
                #expect(page.events.isEmpty && page.head == 2)
            }
            let later = try await service.pull(store: "notes", after: 2, wait: .seconds(25))
            #expect(later.events.isEmpty && later.head == 2)
            // What is there is still served, with or without a wait.
            let full = try await service.pull(store: "notes", after: 0, wait: .seconds(25))
            #expect(full.events.map(\.item) == ["n0", "n1"])
        }
        // Without the end, each pull would sit out its 25 s.
        #expect(elapsed < .seconds(20) + lateness, "took \(elapsed), timers ran \(lateness) late")
        let request = try service.pageRequest(after: 2, limit: nil, check: nil, wait: .seconds(25), keepEvents: true)
        #expect(request.wait == .zero)
    }

    @Test(.timeLimit(.minutes(5))) func automaticSyncLearnsOfOtherReplicasThroughTheLivePull() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let writer = try cluster.addReplica()
        let reader = try cluster.addReplica()
        try await appendNotes(writer, count: 1)
        try await cluster.synchronizer(0).sync()
        var configuration = Synchronizer.Configuration()
        configuration.pollInterval = nil
        let follower = cluster.synchronizer(1, configuration: configuration)
        follower.start()
        #expect(try await eventually { (try? reader.count(in: "notes")) == 1 })
        try await appendNotes(writer, count: 5, prefix: "more")
        try await cluster.synchronizer(0).sync()
        #expect(try await eventually { (try? reader.count(in: "notes")) == 6 })
        await follower.stop()

        // Without live pulls (and without polling) nothing tells the follower.
        configuration.livePullWait = nil
        let deaf = cluster.synchronizer(1, configuration: configuration)
        // Its first sync must be over before the write it must not hear of: a fixed 200 ms was
        // not always enough on a starved machine (the first sync then pulled the write).
        let statuses = deaf.status
        deaf.start()
        for await status in statuses where status.isUpToDate { break }
        try await appendNotes(writer, count: 1, prefix: "unheard")
        try await cluster.synchronizer(0).sync()
        try await Task.sleep(for: .milliseconds(500))
        #expect(try reader.count(in: "notes") == 6)
        await deaf.stop()
    }
}
