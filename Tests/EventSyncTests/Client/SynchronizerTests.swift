import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Synchronization
import Testing

struct SynchronizerTests {
    // MARK: Basics

    @Test func pushThenPull() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let a = try cluster.addReplica()
        let b = try cluster.addReplica()
        try await appendNotes(a, count: 30, prefix: "a")
        try await appendNotes(b, count: 20, prefix: "b")
        let first = try await cluster.synchronizer(0).sync()
        #expect(first.pushed == 30 && first.pulled == 0)
        let second = try await cluster.synchronizer(1).sync()
        #expect(second.pushed == 20 && second.pulled == 30)
        let third = try await cluster.synchronizer(0).sync()
        #expect(third.pushed == 0 && third.pulled == 20)
        #expect(try StoreSnapshot(a) == StoreSnapshot(b))
        #expect(try StoreSnapshot(a) == StoreSnapshot(try await cluster.serverStore()))
        #expect(try a.count(in: "notes") == 50)
        // Pulled events are not pushed back.
        #expect(try cluster.synchronizer(0).pendingCount() == 0)
        #expect(try cluster.synchronizer(1).pendingCount() == 0)
        #expect(try await cluster.serverStore().head() == 50)
    }

    @Test func aMissingRemoteStoreIsCreatedByTheFirstPush() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        _ = try cluster.addReplica()
        let empty = try await cluster.synchronizer(0).sync()
        #expect(empty.pushed == 0 && empty.pulled == 0)
        #expect(try cluster.synchronizer(0).cursor().epoch == nil)
        try await appendNotes(cluster.replicas[0], count: 3)
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.pushed == 3)
        #expect(
            try cluster.synchronizer(0).cursor().epoch
                == (try await cluster.service.info(store: cluster.storeName)).epoch)
    }

    // MARK: Interrupted syncs

    @Test func aPushCutAfterPageKResumesWithoutLossOrDuplicates() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 1000)
        var configuration = Synchronizer.Configuration()
        configuration.pushPageSize = 100
        let faulty = FaultyTransport(cluster.transport())
        faulty.fail(call: 4, .after)  // info, then pushes 1-3 succeed; the 4th is appended but its answer is lost
        let synchronizer = cluster.synchronizer(0, transport: faulty, configuration: configuration)
        await expectSyncError(.transport) { try await synchronizer.sync() }
        #expect(try synchronizer.cursor().pushed == 300)
        #expect(try synchronizer.pendingCount() == 700)
        #expect(try await cluster.serverStore().head() == 400)

        let report = try await synchronizer.sync()
        #expect(report.pushed == 600 && report.duplicates == 100)
        #expect(report.pulled == 0 && report.pulledDuplicates == 1000)  // its own events, back from the server
        let resumedPushes = faulty.calls.dropFirst(5).compactMap { call -> UInt64? in
            if case .push(let first, _) = call { return first }
            return nil
        }
        #expect(resumedPushes.first == 301)
        let server = try await cluster.serverStore()
        #expect(try server.head() == 1000)
        let ids = try eventIDs(of: server)
        #expect(Set(ids).count == 1000)
        #expect(Set(ids) == Set(try eventIDs(of: client)))
    }

    /// A cluster whose server holds 1,000 notes of replica 0, a new replica 1 that holds none,
    /// and the encoded size of each server event, in server order (what a catch-up commit's
    /// byte budget counts).
    private func backlog() async throws -> (cluster: SyncCluster, source: Store, client: Store, sizes: [Int]) {
        let cluster = try SyncCluster()
        let source = try cluster.addReplica()
        try await appendNotes(source, count: 1000)
        try await cluster.synchronizer(0).sync()
        let client = try cluster.addReplica()
        let sizes = try client.check(try allEvents(of: try await cluster.serverStore())).map(\.byteCount)
        return (cluster, source, client, sizes)
    }

    /// Pages of 100 events, and a catch-up budget that two pages of events of `sizes` always fit in
    /// and three never do.
    private func twoPagesPerCommit(_ sizes: [Int]) -> Synchronizer.Configuration {
        let pageBytes = stride(from: 0, to: sizes.count, by: 100).map {
            sizes[$0..<min($0 + 100, sizes.count)].reduce(0, +)
        }
        var configuration = Synchronizer.Configuration()
        configuration.pullPageSize = 100
        configuration.pullBytesPerCommit = pageBytes.max()! * 2
        #expect(pageBytes.min()! * 3 > configuration.pullBytesPerCommit)
        return configuration
    }

    @Test func aBacklogIsIngestedSeveralPagesPerCommitAndACutLosesOnlyTheOpenCommit() async throws {
        let (cluster, source, client, sizes) = try await backlog()
        defer { cluster.close() }
        var configuration = Synchronizer.Configuration()
        configuration.pullPageSize = 100
        // Pages 1-3 fill the budget exactly; pages 4 and 5 (larger events) fit in it, with room left.
        configuration.pullBytesPerCommit = sizes[0..<300].reduce(0, +)
        let faulty = FaultyTransport(cluster.transport(encodesJSON: true))
        // Calls from 0: info, pages 1-3 (one commit), pages 4-5, then page 6 is cut: pages 4-6 were
        // one open commit.
        faulty.fail(call: 6, .after)
        let synchronizer = cluster.synchronizer(1, transport: faulty, configuration: configuration)
        let commitsBefore = try client.statistics().lastTransactionID
        await expectSyncError(.transport) { try await synchronizer.sync() }
        #expect(try synchronizer.cursor().pulled == 300)
        #expect(try client.head() == 300)
        #expect(
            try client.statistics().lastTransactionID == commitsBefore + 2, "the epoch, then three pages in one commit")

        let report = try await synchronizer.sync()
        #expect(report.pulled == 700 && report.pulledDuplicates == 0)
        #expect(try client.head() == 1000)
        #expect(try eventIDs(of: client) == (try eventIDs(of: try await cluster.serverStore())))
        #expect(try StoreSnapshot(client) == StoreSnapshot(source))
    }

    @Test func aBacklogOverTheByteBudgetCommitsInSeveralTransactionsOfWholePages() async throws {
        let (cluster, source, client, sizes) = try await backlog()
        defer { cluster.close() }
        let configuration = twoPagesPerCommit(sizes)
        let synchronizer = cluster.synchronizer(1, configuration: configuration)
        let commitsBefore = try client.statistics().lastTransactionID
        let report = try await synchronizer.sync()
        #expect(report.pulled == 1000 && report.pulledDuplicates == 0)
        #expect(
            try client.statistics().lastTransactionID == commitsBefore + 1 + 5, "the epoch, then 5 commits of 2 pages")
        #expect(try synchronizer.cursor().pulled == 1000)
        #expect(try StoreSnapshot(client) == StoreSnapshot(source))

        // A cut: the commits before it keep their pages and their cursor, the open one is lost.
        let late = try cluster.addReplica()
        let faulty = FaultyTransport(cluster.transport(encodesJSON: true))
        faulty.fail(call: 6, .after)  // info, pages 1-2 (a commit), 3-4 (a commit), then page 5 is cut
        let cut = cluster.synchronizer(2, transport: faulty, configuration: configuration)
        await expectSyncError(.transport) { try await cut.sync() }
        #expect(try cut.cursor().pulled == 400)
        #expect(try late.head() == 400)
    }

    @Test func aBacklogIsFetchedAheadOfItsCommitsWithinTheBudget() async throws {
        /// Records where each pull starts. Before the first page is served, the client's writer is
        /// held (by `hold`) until the fifth page is asked for, and then a while longer.
        final class Probe: Sendable {
            let client: Store
            let pulls = Mutex<[UInt64]>([])
            let gate = DispatchSemaphore(value: 0)
            let hold = Mutex<Task<(opened: Bool, pulls: [UInt64]), any Error>?>(nil)
            init(client: Store) { self.client = client }

            func pull(after: UInt64, _ fetch: @Sendable () async throws -> PullPage) async throws -> PullPage {
                pulls.withLock { $0.append(after) }
                if after == 0 {
                    let entered = DispatchSemaphore(value: 0)
                    let (client, gate) = (client, gate)
                    hold.withLock {
                        $0 = Task {
                            try await client.write { _ -> (opened: Bool, pulls: [UInt64]) in
                                entered.signal()
                                let opened = gate.wait(timeout: .now() + 30) == .success
                                Thread.sleep(forTimeInterval: 0.3)
                                return (opened, self.pulls.withLock { $0 })
                            }
                        }
                    }
                    await Task.detached { entered.wait() }.value
                }
                if after == 400 { gate.signal() }
                return try await fetch()
            }
        }
        let (cluster, source, client, sizes) = try await backlog()
        defer { cluster.close() }
        let configuration = twoPagesPerCommit(sizes)
        let probe = Probe(client: client)
        let transport = PullHook(base: cluster.transport(encodesJSON: true), onPull: probe.pull)
        let synchronizer = cluster.synchronizer(1, transport: transport, configuration: configuration)

        let report = try await synchronizer.sync()
        let (opened, pullsWhileHeld) = try await probe.hold.withLock { $0 }!.value
        #expect(opened, "the fifth page was not fetched while the first commit waited for the writer")
        // The first commit (pages 1-2) waits with page 3, which did not fit in it; the queue holds
        // at most the budget and one page (pages 4-6), and the fetcher one more that it cannot
        // queue (page 7). Without fetching ahead, page 3 is the last fetched before the commit.
        #expect(pullsWhileHeld.max() ?? 0 <= 600, "fetched too far ahead: \(pullsWhileHeld)")
        #expect(report.pulled == 1000 && report.pulledDuplicates == 0)
        #expect(
            probe.pulls.withLock { $0 } == Array(stride(from: 0, to: 1000, by: 100)),
            "each page fetched once, in order")
        #expect(try synchronizer.cursor().pulled == 1000)
        #expect(try StoreSnapshot(client) == StoreSnapshot(source))
    }

    @Test func aPullCutAfterPageKResumesWithoutLossOrDuplicates() async throws {
        let (cluster, source, client, _) = try await backlog()
        defer { cluster.close() }
        var configuration = Synchronizer.Configuration()
        configuration.pullPageSize = 100
        configuration.pullBytesPerCommit = 1  // page by page
        let faulty = FaultyTransport(cluster.transport(encodesJSON: true))
        faulty.fail(call: 5, .after)  // info, pages 1-4 ingested; page 5 fetched but cut before ingest
        let synchronizer = cluster.synchronizer(1, transport: faulty, configuration: configuration)
        await expectSyncError(.transport) { try await synchronizer.sync() }
        #expect(try synchronizer.cursor().pulled == 400)
        #expect(try client.head() == 400)

        let report = try await synchronizer.sync()
        #expect(report.pulled == 600 && report.pulledDuplicates == 0)
        let resumedPulls = faulty.calls.dropFirst(6).compactMap { call -> UInt64? in
            if case .pull(let after) = call { return after }
            return nil
        }
        #expect(resumedPulls.first == 400)
        #expect(try client.head() == 1000)
        #expect(try eventIDs(of: client) == (try eventIDs(of: try await cluster.serverStore())))
        #expect(try StoreSnapshot(client) == StoreSnapshot(source))
    }

    @Test func aCorruptedPageIsRefused() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        try await appendNotes(try cluster.addReplica(), count: 5)
        try await cluster.synchronizer(0).sync()
        let client = try cluster.addReplica()
        let synchronizer = cluster.synchronizer(
            1,
            transport: PullHook(base: cluster.transport()) { _, fetch in
                var page = try await fetch()
                if !page.events.isEmpty { page.events[0].fields["title"] = "tampered" }
                return page
            })
        await expectSyncError(.protocolViolation) { try await synchronizer.sync() }
        #expect(try client.head() == 0)
        #expect(try synchronizer.cursor().pulled == 0)
    }

    // MARK: Conflicts

    @Test func twoUsersEditingTheSameFieldOfflineSeeTheLaterStamp() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let alice = try cluster.addReplica()
        let bob = try cluster.addReplica(skew: 2_000)
        try await alice.put("notes", id: "shared", fields: ["title": "Draft", "content": "body"])
        try await cluster.synchronizer(0).sync()
        try await cluster.synchronizer(1).sync()
        #expect(try bob.item("notes", "shared")?["title"] == "Draft")

        // Both offline: Alice edits first, Bob later (by his clock).
        cluster.advance(by: 10_000)
        try await alice.patch("notes", id: "shared", fields: ["title": "Alice's title"])
        cluster.advance(by: 1_000)
        try await bob.patch("notes", id: "shared", fields: ["title": "Bob's title"])

        try await cluster.synchronizer(0).sync()
        let bobReport = try await cluster.synchronizer(1).sync()
        let aliceReport = try await cluster.synchronizer(0).sync()

        for store in [alice, bob] {
            let item = try #require(try store.item("notes", "shared"))
            #expect(item["title"] == "Bob's title")
            #expect(item["content"] == "body")
        }
        #expect(aliceReport.conflicts == 1)
        let record = try #require(aliceReport.conflictRecords.first)
        #expect(record.field == "title")
        #expect(record.winner.value == "Bob's title")
        #expect(record.loser.value == "Alice's title")
        let bobConflicts = try bob.read { try $0.conflicts(collection: "notes", item: "shared") }
        #expect(bobConflicts.contains { $0.loser.value == "Alice's title" && $0.winner.value == "Bob's title" })
        #expect(bobReport.conflicts == bobConflicts.count)
        #expect(try StoreSnapshot(alice) == StoreSnapshot(bob))
    }

    @Test func conflictsOfAPullOverSeveralCommitsAreAllCountedAndReportedUpToTheLimit() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let alice = try cluster.addReplica()
        let bob = try cluster.addReplica(skew: 2_000)
        try await appendNotes(alice, count: 300)
        try await cluster.synchronizer(0).sync()
        try await cluster.synchronizer(1).sync()

        // Both offline: each retitles every note, Bob later (by his clock); Alice pulls Bob's 300
        // edits in three commits of one page, and each edit is a conflict on her side.
        cluster.advance(by: 10_000)
        try await alice.append(
            (0..<300).map { .patch("notes", id: "n\($0)", fields: ["title": .string("alice \($0)")]) })
        cluster.advance(by: 1_000)
        try await bob.append((0..<300).map { .patch("notes", id: "n\($0)", fields: ["title": .string("bob \($0)")]) })
        try await cluster.synchronizer(0).sync()
        try await cluster.synchronizer(1).sync()

        var configuration = Synchronizer.Configuration()
        configuration.pullPageSize = 100
        configuration.pullBytesPerCommit = 1
        configuration.maxReportedConflicts = 150
        let commitsBefore = try alice.statistics().lastTransactionID
        let report = try await cluster.synchronizer(0, configuration: configuration).sync()
        #expect(report.pulled == 300)
        #expect(try alice.statistics().lastTransactionID - commitsBefore >= 3, "a commit per page")
        #expect(report.conflicts == 300, "every commit's conflicts counted")
        #expect(report.conflictRecords.count == 150, "records kept up to the limit, across commits")
        #expect(Set(report.conflictRecords.map(\.item)).count == 150)
        #expect(report.conflictRecords.allSatisfy { $0.winner.value == .string("bob \($0.item.dropFirst())") })
    }

    // MARK: Status and retries

    @Test func statusReportsPhasesAndPendingCount() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 1200)
        var configuration = Synchronizer.Configuration()
        configuration.pushPageSize = 500
        let synchronizer = cluster.synchronizer(0, configuration: configuration)
        #expect(synchronizer.currentStatus == SyncStatus(phase: .idle, pendingCount: 1200))
        #expect(synchronizer.currentStatus.pendingDescription == "1200 items waiting to sync")
        let stream = synchronizer.status
        try await synchronizer.sync()
        var seen: [SyncStatus] = []
        for await status in stream {
            seen.append(status)
            if status.isUpToDate { break }
        }
        let pushes = seen.compactMap { status -> SyncProgress? in
            if case .pushing(let progress) = status.phase { return progress }
            return nil
        }
        #expect(pushes.map(\.completed) == [0, 500, 1000])
        #expect(pushes.allSatisfy { $0.total == 1200 })
        #expect(seen.last?.pendingCount == 0)
        #expect(seen.last?.pendingDescription == "everything synced")
    }

    @Test func failuresAreReportedAndRetriedWithBackoff() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 10)
        let faulty = FaultyTransport(cluster.transport())
        faulty.fail(call: 0, .before)
        faulty.fail(call: 1, .before)
        var configuration = Synchronizer.Configuration()
        configuration.retry.initialDelay = .milliseconds(20)
        configuration.retry.maxDelay = .milliseconds(50)
        configuration.pollInterval = nil
        let synchronizer = cluster.synchronizer(0, transport: faulty, configuration: configuration)
        let stream = synchronizer.status
        synchronizer.start()
        var failures: [Date?] = []
        for await status in stream {
            if case .failed(let error, let retryAt) = status.phase {
                #expect(error.code == .transport)
                failures.append(retryAt)
            }
            if status.isUpToDate { break }
        }
        await synchronizer.stop()
        #expect(failures.count == 2)
        #expect(failures.allSatisfy { $0 != nil })
        #expect(try await cluster.serverStore().head() == 10)
    }

    @Test func automaticSyncFollowsLocalChanges() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        var configuration = Synchronizer.Configuration()
        configuration.pollInterval = nil
        let synchronizer = cluster.synchronizer(0, configuration: configuration)
        synchronizer.start()
        try await client.put("notes", id: "live", fields: ["title": "typed just now"])
        // `eventually` is generous: this checks that the change is pushed without a poll, not how fast.
        let pushed = try await eventually { (try? await cluster.serverStore().head()) == 1 }
        await synchronizer.stop()
        #expect(pushed)
    }

    @Test func retryDelaysGrowAndStayBounded() {
        var policy = RetryPolicy()
        policy.jitter = 0
        #expect(policy.delay(afterFailures: 1, random: 0.5) == .seconds(1))
        #expect(policy.delay(afterFailures: 3, random: 0.5) == .seconds(4))
        #expect(policy.delay(afterFailures: 30, random: 0.5) == .seconds(60))
        policy.jitter = 0.25
        #expect(policy.delay(afterFailures: 1, random: 0) == .milliseconds(750))
        #expect(policy.delay(afterFailures: 1, random: 0.999_999) <= .milliseconds(1250))
    }
}
