import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Testing

/// A device whose clock ran ahead: its writes wait, never block the rest of the sync for good,
/// and reach everyone stamped anew once the clock is right again.
@Suite("Clock recovery")
struct ClockRecoveryTests {
    static let day: Int64 = 86_400_000

    @Test(
        "writes made a day ahead wait until the clock is right, then reach everyone stamped anew",
        arguments: TestBackend.all)
    func writesAheadAreStampedAnew(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let device = try cluster.addReplica(skew: Self.day)
        let original = device.replicaID
        let written = try await device.append([
            .put("notes", id: "n1", fields: ["title": "one"]), .put("notes", id: "n2", fields: ["title": "two"]),
        ])
        // The clock is still ahead: the server refuses the writes, and the sync says what to do.
        do {
            try await cluster.synchronizer(0).sync()
            Issue.record("a write stamped a day ahead was taken")
        } catch let error as SyncError {
            #expect(error.code == .clockSkew && error.message.contains("set the device's clock right"), "\(error)")
        }
        // The server's refusal names the event and the latest stamp it takes, over HTTP too.
        do {
            _ = try await cluster.transport().push(PushRequest(replica: original, events: written), check: nil)
            Issue.record("a write stamped a day ahead was taken")
        } catch let error as SyncError {
            #expect(error.eventID == written[0].id)
            #expect(error.clockBound == cluster.serverClock.now + 60_000)
            let decoded = SyncError(problemJSON: error.problemJSON(), status: 422)
            #expect(decoded?.clockBound == error.clockBound && decoded?.eventID == error.eventID)
        }
        // The refused pushes created no store.
        await expectSyncError(.notFound) { try await cluster.serverEvents() }
        #expect(device.replicaID == original, "nothing moved while the clock is ahead")

        // The device's clock is set right: the next sync stamps the writes anew and pushes them.
        cluster.clocks[0].set(cluster.serverClock.now)
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.replicaChanges.count == 1 && report.pushed == 2, "\(report)")
        #expect(device.replicaID != original)
        let bound = cluster.serverClock.now + 60_000
        let events = try await cluster.serverEvents()
        #expect(events.map(\.fields) == written.map(\.fields))
        #expect(events.allSatisfy { $0.hlc.physical <= bound && $0.id.origin == device.replicaID })
        // Later writes follow the right clock, and everyone converges.
        let later = try await device.patch("notes", id: "n1", fields: ["title": "later"])
        #expect(later.hlc.physical <= bound)
        let other = try cluster.addReplica()
        try await cluster.synchronizer(0).sync()
        try await cluster.synchronizer(1).sync()
        #expect(try other.item("notes", "n1")?["title"] == "later")
        #expect(try StoreSnapshot(other) == StoreSnapshot(device))
        #expect(try device.verify().isConsistent)
    }

    @Test("a device whose clock is five minutes behind still receives what others wrote, and its next write wins")
    func aClockBehindStillPulls() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let writer = try cluster.addReplica()
        let written = try await writer.put("notes", id: "n1", fields: ["title": "from a right clock"])
        try await cluster.synchronizer(0).sync()
        let behind = try cluster.addReplica(skew: -300_000)
        // Handed over directly, the event is refused: too far ahead of this device's clock.
        do {
            _ = try await behind.ingest([written])
            Issue.record("a stamp five minutes ahead was taken directly")
        } catch let error as EventStoreError {
            #expect(error.code == .clockSkew && error.skewedStamp?.stamp == written.hlc)
        }
        // From the server, which took it against its own clock, it is received within the
        // pulls' wider bound (a day by default), not beyond it.
        var narrow = Synchronizer.Configuration()
        narrow.maxPulledClockSkew = .seconds(120)
        await expectSyncError(.clockSkew) { try await cluster.synchronizer(1, configuration: narrow).sync() }
        #expect(try behind.item("notes", "n1") == nil)
        let report = try await cluster.synchronizer(1).sync()
        #expect(report.pulled == 1, "\(report)")
        let edit = try await behind.patch("notes", id: "n1", fields: ["title": "edited behind"])
        #expect(edit.hlc > written.hlc, "the clock moved up to what it received")
        try await cluster.synchronizer(1).sync()
        try await cluster.synchronizer(0).sync()
        #expect(try writer.item("notes", "n1")?["title"] == "edited behind")
        #expect(try StoreSnapshot(writer) == StoreSnapshot(behind))
    }

    @Test("writes ahead that another remote already holds are not stamped anew: the refusal says why")
    func writesAnotherRemoteHoldsStay() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let device = try cluster.addReplica(skew: Self.day)
        let original = device.replicaID
        try await device.put("notes", id: "n1", fields: ["title": "one"])
        // Another remote (a server with a wider skew bound) acknowledged it.
        try await device.write { writer in
            var bytes: [UInt8] = [3, 0]
            for value: UInt64 in [1, 0, 0, 0, 0, 0] { bytes += withUnsafeBytes(of: value.bigEndian, Array.init) }
            try writer.setMetadata(try SyncCursor(decoding: bytes).encoded(), forKey: "sync.remote.other")
        }
        cluster.clocks[0].set(cluster.serverClock.now)
        do {
            try await cluster.synchronizer(0).sync()
            Issue.record("the sync went through")
        } catch let error as SyncError {
            #expect(error.code == .clockSkew && error.message.contains("a remote has them already"), "\(error)")
        }
        #expect(device.replicaID == original)
        await expectSyncError(.notFound) { try await cluster.serverEvents() }
    }

    @Test("another replica's event stamped ahead waits as a relay and holds up nothing else")
    func aRelayAheadWaits() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let writer = try cluster.addReplica()
        try await writer.put("notes", id: "n1", fields: ["title": "from the server"])
        try await cluster.synchronizer(0).sync()
        // A store whose clock runs ahead got an event of a third replica stamped as far ahead.
        let peer = try cluster.addReplica(skew: Self.day)
        let ahead = Event(
            id: EventID(origin: ReplicaID(high: 5, low: 5), sequence: 1),
            hlc: HLCTimestamp(physical: cluster.clocks[1].now, logical: 0), collection: "notes", item: "n9",
            operation: .put, fields: ["title": "ahead"])
        _ = try await peer.ingest([ahead])
        let report = try await cluster.synchronizer(1).sync()
        #expect(report.relaysRefused == 1 && report.pulled == 1, "\(report)")
        #expect(try cluster.synchronizer(1).pendingCount() == 1)
        #expect(try peer.item("notes", "n1")?["title"] == "from the server")
        // Once the server's clock is near the stamp, the relay is taken.
        cluster.advance(by: Self.day)
        let later = try await cluster.synchronizer(1).sync()
        #expect(later.pushed == 1, "\(later)")
        #expect(try cluster.synchronizer(1).pendingCount() == 0)
    }
}
