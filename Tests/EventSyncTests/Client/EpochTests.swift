import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Testing

struct EpochTests {
    /// Replaces the server's data directory by `backup`, with the service stopped.
    static func restore(_ cluster: SyncCluster, from backup: String) throws {
        cluster.stopServer()
        try FileManager.default.removeItem(atPath: cluster.serverPath)
        try FileManager.default.copyItem(atPath: backup, toPath: cluster.serverPath)
        try cluster.restartServer()
    }

    static func backUp(_ cluster: SyncCluster) throws -> String {
        cluster.stopServer()
        let backup = cluster.directory.appending("backup")
        try FileManager.default.copyItem(atPath: cluster.serverPath, toPath: backup)
        try cluster.restartServer()
        return backup
    }

    @Test func aServerRestoredFromAnOlderCopyGetsEverythingBack() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let a = try cluster.addReplica()
        let b = try cluster.addReplica()
        let c = try cluster.addReplica()
        try await appendNotes(a, count: 10, prefix: "a")
        try await cluster.synchronizer(0).sync()
        try await cluster.synchronizer(2).sync()
        let epochBefore = try await cluster.service.info(store: cluster.storeName).epoch

        let backup = try Self.backUp(cluster)
        try await appendNotes(a, count: 10, prefix: "a2-")
        try await appendNotes(b, count: 5, prefix: "b")
        try await cluster.synchronizer(0).sync()
        try await cluster.synchronizer(1).sync()
        #expect(try await cluster.serverStore().head() == 25)

        try Self.restore(cluster, from: backup)
        #expect(try await cluster.serverStore().head() == 10)
        // A fresh client writes first: the restored log grows past the old marks, with other events.
        let d = try cluster.addReplica()
        try await appendNotes(d, count: 30, prefix: "d")
        try await cluster.synchronizer(3).sync()
        #expect(try await cluster.service.info(store: cluster.storeName).epoch == epochBefore)

        let reportA = try await cluster.synchronizer(0).sync()
        #expect(reportA.epochChanged)
        let epochAfter = try await cluster.service.info(store: cluster.storeName).epoch
        #expect(epochAfter != epochBefore)
        for index in [1, 2, 3, 0, 1, 2, 3] { try await cluster.synchronizer(index).sync() }

        let server = try await cluster.serverStore()
        #expect(try server.head() == 55)
        let expected = Set(try eventIDs(of: server))
        #expect(expected.count == 55)
        for store in [a, b, c, d] {
            #expect(Set(try eventIDs(of: store)) == expected)
            #expect(try StoreSnapshot(store) == StoreSnapshot(server))
        }
    }

    @Test func aClientThatOnlyPushedNoticesTheRewindToo() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let a = try cluster.addReplica()
        try await appendNotes(a, count: 3, prefix: "a")
        try await cluster.synchronizer(0).sync()
        let backup = try Self.backUp(cluster)
        // Push, then lose the pull: the client's mark comes from the push answer alone.
        try await appendNotes(a, count: 4, prefix: "late")
        let faulty = FaultyTransport(cluster.transport())
        faulty.fail(call: 2, .before)  // info, push, pull
        await expectSyncError(.transport) { try await cluster.synchronizer(0, transport: faulty).sync() }
        let cursor = try cluster.synchronizer(0).cursor()
        #expect(cursor.pushed == 7 && cursor.pulled == 3 && cursor.mark == 7)

        try Self.restore(cluster, from: backup)
        #expect(try await cluster.serverStore().head() == 3)
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.epochChanged)
        #expect(report.pushed == 4 && report.pulled == 0)
        #expect(try await cluster.serverStore().head() == 7)
        #expect(try cluster.synchronizer(0).pendingCount() == 0)
    }

    @Test func aServerRestoredToBeforeTheStoreExistedGetsEverythingBack() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let a = try cluster.addReplica()
        let b = try cluster.addReplica()
        let backup = try Self.backUp(cluster)  // the remote store does not exist yet
        try await appendNotes(a, count: 6, prefix: "a")
        try await appendNotes(b, count: 4, prefix: "b")
        for index in [0, 1, 0] { try await cluster.synchronizer(index).sync() }
        #expect(try await cluster.serverStore().head() == 10)

        try Self.restore(cluster, from: backup)
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.epochChanged)
        #expect(report.pushed == 10, "a pushes its own events and those it pulled from b")
        try await cluster.synchronizer(1).sync()
        let server = try await cluster.serverStore()
        #expect(try server.head() == 10)
        for store in [a, b] {
            #expect(Set(try eventIDs(of: store)) == Set(try eventIDs(of: server)))
            #expect(try StoreSnapshot(store) == StoreSnapshot(server))
        }
        #expect(try cluster.synchronizer(0).pendingCount() == 0)
        #expect(try cluster.synchronizer(1).pendingCount() == 0)
    }

    @Test func continuityChecksOnlyRotateOnRealMismatches() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let a = try cluster.addReplica()
        try await appendNotes(a, count: 5)
        try await cluster.synchronizer(0).sync()
        let info = try await cluster.service.info(store: cluster.storeName)
        let cursor = try cluster.synchronizer(0).cursor()
        #expect(cursor.mark == 5 && cursor.markDigest == info.digest)
        // A matching mark, an old epoch, or no mark: no change.
        _ = try await cluster.service.info(store: cluster.storeName, check: cursor.check)
        _ = try await cluster.service.info(
            store: cluster.storeName, check: ContinuityCheck(epoch: "old", seq: 99, digest: .empty))
        #expect(try await cluster.service.info(store: cluster.storeName).epoch == info.epoch)
        // A mark past the head: rotation.
        let rotated = try await cluster.service.info(
            store: cluster.storeName, check: ContinuityCheck(epoch: info.epoch, seq: 6, digest: info.digest))
        #expect(rotated.epoch != info.epoch)
        // A wrong digest: rotation again.
        let again = try await cluster.service.info(
            store: cluster.storeName, check: ContinuityCheck(epoch: rotated.epoch, seq: 3, digest: .empty))
        #expect(again.epoch != rotated.epoch)
    }
}
