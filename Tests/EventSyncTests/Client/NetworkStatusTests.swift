import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Testing

/// The network the app reports: no blind retries while offline, a sync the moment it returns,
/// large pulls held for an unmetered network; and pending counts in items.
struct NetworkStatusTests {
    @Test func offlineAutomaticSyncMakesNoRequestsAndSyncsWhenTheNetworkReturns() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        let transport = FaultyTransport(cluster.transport())
        var configuration = Synchronizer.Configuration()
        configuration.pollInterval = .milliseconds(20)
        configuration.retry.initialDelay = .milliseconds(10)
        let synchronizer = cluster.synchronizer(0, transport: transport, configuration: configuration)
        synchronizer.networkStatus = .offline
        synchronizer.start()
        try await appendNotes(client, count: 5)
        #expect(try await eventually { synchronizer.currentStatus.phase == .offline })
        #expect(try await eventually { synchronizer.currentStatus.pendingItems == 5 })
        // Polls and local changes come and go; nothing is tried while offline.
        try await Task.sleep(for: .milliseconds(300))
        try await appendNotes(client, count: 2, prefix: "later")
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.calls.isEmpty)
        #expect(synchronizer.currentStatus.phase == .offline)
        #expect(synchronizer.currentStatus.pendingItems == 7)

        synchronizer.networkStatus = .unmetered
        #expect(try await eventually { (try? await cluster.serverStore().head()) == 7 })
        #expect(
            try await eventually {
                synchronizer.currentStatus.isUpToDate && synchronizer.currentStatus.pendingItems == 0
            })
        await synchronizer.stop()
    }

    @Test func aMeteredNetworkHoldsALargePullButStillPushes() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let other = try cluster.addReplica()
        let client = try cluster.addReplica()
        try await appendNotes(other, count: 50, prefix: "other")
        try await cluster.synchronizer(0).sync()
        try await appendNotes(client, count: 3, prefix: "mine")

        var configuration = Synchronizer.Configuration()
        configuration.meteredPullLimit = 10
        let synchronizer = cluster.synchronizer(1, configuration: configuration)
        synchronizer.networkStatus = .metered
        let held = try await synchronizer.sync()
        #expect(held.pushed == 3)
        #expect(held.pulled == 0)
        #expect(held.heldPull == 50, "the server events not yet pulled when the sync began")
        #expect(synchronizer.currentStatus.phase == .pullHeld(events: held.heldPull))
        #expect(synchronizer.currentStatus.pendingItems == 0)
        #expect(try client.count(in: "notes") == 3)

        // A small backlog is pulled on a metered network too.
        configuration.meteredPullLimit = 1000
        let generous = cluster.synchronizer(1, configuration: configuration)
        generous.networkStatus = .metered
        #expect(try await generous.sync().pulled == 50)

        // Unmetered: everything is pulled.
        try await appendNotes(other, count: 20, prefix: "again")
        try await cluster.synchronizer(0).sync()
        synchronizer.networkStatus = .unmetered
        let report = try await synchronizer.sync()
        #expect(report.heldPull == 0)
        #expect(report.pulled == 20)
        #expect(try client.count(in: "notes") == 73)
        #expect(synchronizer.currentStatus.isUpToDate)
    }

    @Test func pendingCountsItemsNotEvents() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        for round in 0..<4 {
            _ = try await client.append(
                (0..<25).map { .put("notes", id: "n\($0)", fields: ["title": .string("round \(round)")]) })
        }
        let synchronizer = cluster.synchronizer(0)
        #expect(try synchronizer.pendingCount() == 100)
        #expect(try synchronizer.pendingItemCount() == 25)
        #expect(synchronizer.currentStatus.pendingDescription == "25 items waiting to sync")
        try await synchronizer.sync()
        #expect(try synchronizer.pendingItemCount() == 0)
        _ = try await client.put("notes", id: "n3", fields: ["title": "edited"])
        _ = try await client.put("notes", id: "n3", fields: ["title": "edited again"])
        _ = try await client.delete("notes", id: "n4")
        #expect(try synchronizer.pendingCount() == 3)
        #expect(try synchronizer.pendingItemCount() == 2)
        try await synchronizer.sync()
        #expect(try synchronizer.pendingItemCount() == 0)
        #expect(synchronizer.currentStatus.pendingDescription == "everything synced")
    }
}
