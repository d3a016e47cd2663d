import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Testing

/// The observable sync monitor an app's status line binds to.
///
/// A sync here runs on the cooperative pool, which the whole parallel suite shares on two cores:
/// in full-suite runs one took over a minute. The waits for a sync's outcome allow three.
@MainActor
struct SyncMonitorTests {
    /// How long a wait for a sync's outcome may take.
    static let syncTimeout: TimeInterval = 180

    @Test func followsAutomaticSyncFromPendingItemsToUpToDate() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 3)
        var configuration = Synchronizer.Configuration()
        configuration.pollInterval = nil
        let synchronizer = cluster.synchronizer(0, configuration: configuration)
        let monitor = SyncMonitor(synchronizer, startsAutomaticSync: false)
        #expect(monitor.state == .idle)
        #expect(monitor.pendingItems == 3)
        #expect(monitor.summary == "Not synced yet — 3 items waiting to sync")

        monitor.syncNow()
        #expect(
            try await eventually(timeout: Self.syncTimeout) {
                if case .upToDate = monitor.state { monitor.pendingItems == 0 } else { false }
            })
        #expect(monitor.lastSynced != nil)
        #expect(monitor.summary == "Up to date")
        #expect(try await cluster.serverStore().head() == 3)
        await synchronizer.stop()
    }

    @Test func showsOfflineAndSyncsWhenTheNetworkReturns() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        var configuration = Synchronizer.Configuration()
        configuration.pollInterval = nil
        let synchronizer = cluster.synchronizer(0, configuration: configuration)
        synchronizer.networkStatus = .offline
        let monitor = SyncMonitor(synchronizer)
        #expect(monitor.network == .offline)
        #expect(try await eventually { monitor.state == .offline })
        _ = try await client.put("notes", id: "draft", fields: ["title": "written on a plane"])
        #expect(try await eventually { monitor.pendingItems == 1 })
        #expect(monitor.summary == "Offline — 1 item waiting to sync")

        monitor.network = .unmetered
        #expect(synchronizer.networkStatus == .unmetered)
        #expect(
            try await eventually(timeout: Self.syncTimeout) {
                if case .upToDate = monitor.state { monitor.pendingItems == 0 } else { false }
            })
        #expect(try await cluster.serverStore().head() == 1)
        await synchronizer.stop()
    }

    @Test func showsAFailureWithItsRetryAndAHeldPull() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let other = try cluster.addReplica()
        _ = try cluster.addReplica()
        try await appendNotes(other, count: 30)
        try await cluster.synchronizer(0).sync()

        let faulty = FaultyTransport(cluster.transport())
        faulty.fail(call: 0, .before)
        var configuration = Synchronizer.Configuration()
        configuration.pollInterval = nil
        configuration.retry.initialDelay = .seconds(30)
        configuration.meteredPullLimit = 10
        let synchronizer = cluster.synchronizer(1, transport: faulty, configuration: configuration)
        let monitor = SyncMonitor(synchronizer)
        #expect(
            try await eventually { if case .failed(_, let retry?) = monitor.state { retry > Date() } else { false } })
        #expect(monitor.summary.hasPrefix("Sync failed: injected failure"))

        // A network change cuts the retry's wait short; on a metered network the backlog waits.
        monitor.network = .metered
        #expect(try await eventually { monitor.state == .waitingForUnmeteredNetwork(events: 30) })
        #expect(monitor.summary == "Waiting for Wi-Fi to download changes")
        monitor.network = .unmetered
        #expect(
            try await eventually(timeout: Self.syncTimeout) {
                if case .upToDate = monitor.state { true } else { false }
            })
        #expect(try cluster.replicas[1].count(in: "notes") == 30)
        await synchronizer.stop()
    }
}
