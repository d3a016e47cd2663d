import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Synchronization
import Testing

/// The stores of the LMDB backend around their creation: a service closed while a first push
/// runs keeps what it acknowledged and nothing it refused; a store an app serves takes a name
/// no other store has.
struct LMDBSyncStorageTests {
    /// A service closed while first pushes create their stores: each store whose push was
    /// acknowledged is on disk with its event, and no refused or failed push leaves a store.
    @Test func aServiceClosedDuringFirstPushesKeepsTheAcknowledgedAndNoRefusedStore() async throws {
        let directory = TemporaryDirectory(prefix: "lmdb-storage-close")
        defer { directory.remove() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let good = try await replica.put("notes", id: "n1", fields: ["title": "one"])
        let ahead = {
            var ahead = good
            ahead.hlc = HLCTimestamp(physical: UInt64(Date().timeIntervalSince1970 * 1000) + 3_600_000, logical: 0)
            return ahead
        }()
        let (refusedPush, acceptedPush) = (
            PushRequest(replica: replica.replicaID, events: [ahead]),
            PushRequest(replica: replica.replicaID, events: [good])
        )
        var closedDuringAPush = 0
        for round in 0..<40 {
            let data = directory.appending("server\(round)")
            let service = try SyncService(configuration: .init(dataDirectory: data))
            let ended = Flag()
            let refused = Task {
                defer { ended.set() }
                return try await service.push(store: "refused", refusedPush)
            }
            let accepted = Task { try await service.push(store: "accepted", acceptedPush) }
            if round % 2 == 0 {
                // Closes while the refused push's store is on disk (its push has created it and
                // not yet ended), or as soon after as this task gets to run.
                let deadline = ContinuousClock.now + .seconds(5)
                while !FileManager.default.fileExists(atPath: data + "/refused/data.mdb"), !ended.isSet,
                    ContinuousClock.now < deadline
                {
                    await Task.yield()
                }
                if FileManager.default.fileExists(atPath: data + "/refused/data.mdb") { closedDuringAPush += 1 }
            } else {
                // Closes before, during or after the pushes, as the round falls (0 to 1.8 ms).
                try await Task.sleep(for: .microseconds(200 * (round % 10)))
            }
            service.close()
            let refusal = await refused.result
            #expect(throws: SyncError.self) { try refusal.get() }
            #expect(
                !FileManager.default.fileExists(atPath: data + "/refused"),
                "round \(round): a refused push left a store")
            switch await accepted.result {
            case .success(let outcome):
                #expect(outcome.head == 1)
                let store = try Store.open(at: data + "/accepted")
                defer { store.close() }
                #expect(try store.head() == 1, "round \(round): an acknowledged push is not on disk")
            case .failure(let error):
                #expect((error as? SyncError)?.code == .unavailable, "round \(round): \(error)")
                #expect(!FileManager.default.fileExists(atPath: data + "/accepted"), "round \(round)")
            }
        }
        // Some rounds closed the service while the refused push's store was on disk.
        #expect(closedDuringAPush > 0)
    }

    /// A store written before epochs had keys gets one when the service opens it: its marks are
    /// signed from then on, and its epoch stays.
    @Test func aStoreWithoutAnEpochKeyGetsOneOnOpen() async throws {
        let directory = TemporaryDirectory(prefix: "lmdb-storage-key")
        defer { directory.remove() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let event = try await replica.put("notes", id: "n1", fields: ["title": "one"])
        let configuration = SyncService.Configuration(dataDirectory: directory.appending("server"))
        let first = try SyncService(configuration: configuration)
        _ = try await first.push(store: "notes", PushRequest(replica: replica.replicaID, events: [event]))
        let before = try await first.info(store: "notes")
        first.close()
        do {
            let store = try Store.open(at: directory.appending("server/notes"))
            defer { store.close() }
            try await store.write { writer in try writer.setMetadata(nil, forKey: "sync.epoch-key") }
        }

        let service = try SyncService(configuration: configuration)
        defer { service.close() }
        let info = try await service.info(store: "notes")
        #expect(info.epoch == before.epoch && info.head == 1)
        let signature = try #require(info.signature)
        #expect(signature != before.signature, "a new key signs the epoch's marks")
        let mark = ContinuityCheck(epoch: info.epoch, seq: 1, digest: info.digest, signature: signature)
        #expect(try await service.info(store: "notes", check: mark).epoch == info.epoch)
        // A mark the lost key signed past the head: unverified, no new epoch.
        let lost = ContinuityCheck(epoch: info.epoch, seq: 2, digest: info.digest, signature: before.signature)
        await expectSyncError(.unverifiedMark) { _ = try await service.info(store: "notes", check: lost) }
        #expect(try await service.info(store: "notes").epoch == info.epoch)
    }

    /// An app's store is served under a name of its own: not one a store of the data directory
    /// has (nor its case twin), nor another served store's; serving the same store again changes
    /// nothing.
    @Test func aServedStoreTakesANameNoOtherStoreHas() async throws {
        let directory = TemporaryDirectory(prefix: "lmdb-storage-serve")
        defer { directory.remove() }
        let phone = try Store.open(at: directory.appending("phone"))
        defer { phone.close() }
        let tablet = try Store.open(at: directory.appending("tablet"))
        defer { tablet.close() }
        let service = try SyncService(configuration: .init(dataDirectory: directory.appending("server")))
        defer { service.close() }
        let event = try await tablet.put("notes", id: "n1", fields: ["title": "one"])
        _ = try await service.push(store: "notes", PushRequest(replica: tablet.replicaID, events: [event]))

        await expectSyncError(.invalidStoreName) { try await service.serve(phone, as: "notes") }
        await expectSyncError(.invalidStoreName) { try await service.serve(phone, as: "Notes") }
        #expect(try await service.pull(store: "notes", after: 0).events.map(\.id) == [event.id])
        try await service.serve(phone, as: "phone")
        try await service.serve(phone, as: "phone")
        await expectSyncError(.invalidStoreName) { try await service.serve(tablet, as: "phone") }
        #expect(try await service.store(named: "phone") === phone)
        #expect(try await service.storeNames() == ["notes", "phone"])
    }

    /// A flag one task sets and another reads.
    final class Flag: Sendable {
        private let value = Atomic(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }
}
