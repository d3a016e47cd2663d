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
        #expect(cursor.markSignature != nil, "the push answer's mark is signed")

        try Self.restore(cluster, from: backup)
        #expect(try await cluster.serverStore().head() == 3)
        let epoch = try await cluster.service.info(store: cluster.storeName).epoch
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.epochChanged)
        #expect(
            try await cluster.service.info(store: cluster.storeName).epoch != epoch,
            "the signed mark of the push answer started a new epoch")
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

    /// A cluster whose one replica synced `count` notes, and the server's info after.
    static func synced(notes count: Int) async throws -> (cluster: SyncCluster, replica: Store, info: RemoteInfo) {
        let cluster = try SyncCluster()
        do {
            let replica = try cluster.addReplica()
            try await appendNotes(replica, count: count)
            try await cluster.synchronizer(0).sync()
            return (cluster, replica, try await cluster.service.info(store: cluster.storeName))
        } catch {
            cluster.close()
            throw error
        }
    }

    @Test func continuityChecksOnlyRotateOnRealMismatches() async throws {
        let (cluster, _, info) = try await Self.synced(notes: 5)
        defer { cluster.close() }
        let cursor = try cluster.synchronizer(0).cursor()
        #expect(cursor.mark == 5 && cursor.markDigest == info.digest)
        #expect(cursor.markSignature != nil && cursor.markSignature == info.signature, "the server signs its marks")
        // A matching mark, an old epoch, or no mark: no change.
        _ = try await cluster.service.info(store: cluster.storeName, check: cursor.check)
        _ = try await cluster.service.info(
            store: cluster.storeName, check: ContinuityCheck(epoch: "old", seq: 99, digest: .empty))
        #expect(try await cluster.service.info(store: cluster.storeName).epoch == info.epoch)
        // A matching digest needs no signature.
        _ = try await cluster.service.info(
            store: cluster.storeName, check: ContinuityCheck(epoch: info.epoch, seq: 5, digest: info.digest))
        #expect(try await cluster.service.info(store: cluster.storeName).epoch == info.epoch)
    }

    /// A client cannot start a new epoch (and so a full sync of every client) with a mark the
    /// server did not sign: a mark past the head, another digest at a mark, a signature copied
    /// from another mark or made up. Each is refused, on every operation, and changes nothing.
    @Test func aForgedMarkStartsNoEpoch() async throws {
        let (cluster, a, info) = try await Self.synced(notes: 5)
        defer { cluster.close() }
        let signature = try #require(info.signature)
        let forged = [
            ContinuityCheck(epoch: info.epoch, seq: 6, digest: info.digest),
            ContinuityCheck(epoch: info.epoch, seq: 6, digest: info.digest, signature: signature),
            ContinuityCheck(epoch: info.epoch, seq: 1 << 40, digest: .empty, signature: MarkSignature(rawValue: 7)),
            ContinuityCheck(epoch: info.epoch, seq: 3, digest: .empty),
            ContinuityCheck(epoch: info.epoch, seq: 5, digest: .empty, signature: signature),
        ]
        let replica = try a.currentIdentity().replica
        for check in forged {
            await expectSyncError(.unverifiedMark) {
                _ = try await cluster.service.info(store: cluster.storeName, check: check)
            }
            await expectSyncError(.unverifiedMark) {
                _ = try await cluster.service.pull(store: cluster.storeName, after: 0, check: check)
            }
            await expectSyncError(.unverifiedMark) {
                _ = try await cluster.service.push(
                    store: cluster.storeName, PushRequest(replica: replica, events: [], through: 5), check: check)
            }
        }
        let after = try await cluster.service.info(store: cluster.storeName)
        #expect(after.epoch == info.epoch && after.head == 5 && after.signature == signature)
    }

    /// A service that trusts unsigned marks (for clients of an earlier release) starts a new
    /// epoch on an unsigned claim of a rewind, as before marks were signed; a signature that
    /// does not verify is still refused.
    @Test func aServiceMayTrustUnsignedMarks() async throws {
        let directory = TemporaryDirectory(prefix: "epoch-trust")
        defer { directory.remove() }
        var configuration = SyncService.Configuration(dataDirectory: directory.appending("server"))
        configuration.trustsUnsignedMarks = true
        let service = try SyncService(configuration: configuration)
        defer { service.close() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let event = try await replica.put("notes", id: "n1", fields: ["title": "one"])
        _ = try await service.push(store: "notes", PushRequest(replica: replica.replicaID, events: [event]))
        let info = try await service.info(store: "notes")
        let signature = try #require(info.signature)
        await expectSyncError(.unverifiedMark) {
            _ = try await service.info(
                store: "notes",
                check: ContinuityCheck(epoch: info.epoch, seq: 2, digest: info.digest, signature: signature))
        }
        #expect(try await service.info(store: "notes").epoch == info.epoch)
        let rotated = try await service.info(
            store: "notes", check: ContinuityCheck(epoch: info.epoch, seq: 2, digest: info.digest))
        #expect(rotated.epoch != info.epoch && rotated.signature != nil)
    }

    /// A mark the server did not sign (from before servers signed marks, or signed with a key a
    /// restore lost) cannot prove a rewind; after a real one the client still loses nothing: the
    /// server answers `unverified-mark`, and the client forgets its positions and syncs
    /// everything again in the same epoch.
    @Test func aClientWithAnUnsignedMarkGetsEverythingBackAfterARestore() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let a = try cluster.addReplica()
        // Before the restore the server's answers come without signatures.
        try await appendNotes(a, count: 3, prefix: "a")
        try await cluster.synchronizer(0, transport: UnsignedMarks(base: cluster.transport())).sync()
        let backup = try Self.backUp(cluster)
        try await appendNotes(a, count: 4, prefix: "late")
        try await cluster.synchronizer(0, transport: UnsignedMarks(base: cluster.transport())).sync()
        let cursor = try cluster.synchronizer(0).cursor()
        #expect(cursor.mark == 7 && cursor.markSignature == nil)
        let epoch = try await cluster.service.info(store: cluster.storeName).epoch

        try Self.restore(cluster, from: backup)
        #expect(try await cluster.serverStore().head() == 3)
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.epochChanged, "the client re-synced")
        #expect(report.pushed == 4 && report.pulled == 0, "the 4 events the restore lost")
        let server = try await cluster.serverStore()
        #expect(try server.head() == 7)
        #expect(try await cluster.service.info(store: cluster.storeName).epoch == epoch, "no new epoch")
        #expect(Set(try eventIDs(of: a)) == Set(try eventIDs(of: server)))
        #expect(try cluster.synchronizer(0).pendingCount() == 0)
        #expect(try cluster.synchronizer(0).cursor().markSignature != nil)
    }
}

/// A transport to a server that does not sign its marks: every answer's signature is dropped.
private struct UnsignedMarks: SyncTransport {
    let base: any SyncTransport

    var remoteIdentifier: String { base.remoteIdentifier }

    func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
        var info = try await base.info(check: check, replica: replica)
        info.signature = nil
        return info
    }

    func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
        var response = try await base.push(request, check: check)
        response.signature = nil
        return response
    }

    func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
        var page = try await base.pull(after: after, limit: limit, check: check)
        page.signature = nil
        return page
    }
}
