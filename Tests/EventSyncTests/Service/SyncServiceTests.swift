import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Testing

/// The service's rules, on every backend.
struct SyncServiceTests {
    // MARK: Idempotency

    @Test(arguments: TestBackend.all)
    func theSameBatchPushedTwiceAppendsOnce(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 50)
        let events = try client.read { reader in
            var events: [Event] = []
            try reader.forEachEvent {
                events.append($0); return true
            }
            return events
        }
        let request = PushRequest(replica: client.replicaID, events: events)
        for encodesJSON in [false, true] {
            let transport = cluster.transport(encodesJSON: encodesJSON)
            let first = try await transport.push(request, check: nil)
            let second = try await transport.push(request, check: nil)
            if !encodesJSON {
                #expect(first.accepted == 50 && first.duplicates == 0)
            } else {
                #expect(first.accepted == 0 && first.duplicates == 50)
            }
            #expect(second.accepted == 0 && second.duplicates == 50)
            #expect(second.head == 50)
            #expect(second.highWater == 50)
            #expect(first.digest == second.digest)
        }
        #expect(try await cluster.serverEvents().map(\.id) == events.map(\.id))
        #expect(try await cluster.service.info(store: cluster.storeName).head == 50)
    }

    @Test(arguments: TestBackend.all)
    func anInvalidEventRejectsTheWholeBatch(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 5)
        var events = try client.read { reader in
            var events: [Event] = []
            try reader.forEachEvent {
                events.append($0); return true
            }
            return events
        }
        _ = try await cluster.transport().push(PushRequest(replica: client.replicaID, events: [events[0]]), check: nil)
        events[3].collection = "bad/name"
        await expectSyncError(.invalidEvent) {
            try await cluster.transport().push(PushRequest(replica: client.replicaID, events: events), check: nil)
        }
        events[3].collection = "notes"
        events[4].hlc = HLCTimestamp(physical: cluster.serverClock.now + 61_000, logical: 0)
        do {
            _ = try await cluster.transport().push(PushRequest(replica: client.replicaID, events: events), check: nil)
            Issue.record("a far-future stamp was accepted")
        } catch let error as SyncError {
            #expect(error.code == .clockSkew)
            #expect(error.message.contains("events[4]"))
        }
        #expect(try await cluster.service.info(store: cluster.storeName).head == 1)
    }

    /// A retried push is acknowledged as duplicates even when the server's clock stepped back
    /// since it took the events, so that their stamps now look too far ahead.
    @Test(arguments: TestBackend.all)
    func aRetryAfterTheServersClockSteppedBackIsADuplicate(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let client = try cluster.addReplica()
        var event = try await client.put("notes", id: "n1", fields: ["title": "one"])
        event.hlc = HLCTimestamp(physical: cluster.serverClock.now + 50_000, logical: 0)
        let request = PushRequest(replica: client.replicaID, events: [event])
        #expect(try await cluster.transport().push(request, check: nil).accepted == 1)
        cluster.serverClock.advance(by: -30_000)
        let retried = try await cluster.transport().push(request, check: nil)
        #expect(retried.duplicates == 1 && retried.accepted == 0)
        // A new event stamped as far ahead is still refused.
        var newer = event
        newer.id.sequence += 1
        await expectSyncError(.clockSkew) {
            try await cluster.transport().push(PushRequest(replica: client.replicaID, events: [newer]), check: nil)
        }
        #expect(try await cluster.service.info(store: cluster.storeName).head == 1)
    }

    @Test(arguments: TestBackend.all)
    func limitsAreEnforced(backend: TestBackend) async throws {
        var limits = SyncLimits()
        limits.maxPushEvents = 10
        limits.maxPageEvents = 7
        let cluster = try await SyncCluster.make(backend, limits: limits)
        defer { cluster.close() }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 11)
        let events = try client.read { reader in
            var events: [Event] = []
            try reader.forEachEvent {
                events.append($0); return true
            }
            return events
        }
        await expectSyncError(.payloadTooLarge) {
            try await cluster.transport().push(PushRequest(replica: client.replicaID, events: events), check: nil)
        }
        _ = try await cluster.transport().push(
            PushRequest(replica: client.replicaID, events: Array(events.prefix(10))), check: nil)
        let page = try await cluster.transport().pull(after: 0, limit: 100, check: nil)
        #expect(page.events.count == 7)
        #expect(page.next == 7 && page.head == 10)
        #expect(page.checksum == PageChecksum(events: page.events))
        let json = try await cluster.transport(encodesJSON: true).pull(after: 0, limit: 100, check: nil)
        #expect(json == page)
        // A seq past 2^63 − 1 is refused the same on every backend.
        #expect(try await cluster.transport().pull(after: UInt64(Int64.max), limit: 5, check: nil).events.isEmpty)
        await expectSyncError(.invalidRequest) {
            try await cluster.transport().pull(after: UInt64(Int64.max) + 1, limit: 5, check: nil)
        }
    }

    @Test(arguments: TestBackend.all)
    func storesAreNamedSafelyAndFoundOrCreated(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        for name in ["..", "../x", "a/b", "", ".hidden", String(repeating: "a", count: 65), "a b"] {
            #expect(!StoreName.isValid(name))
            await expectSyncError(.invalidStoreName) { try await cluster.service.info(store: name) }
        }
        await expectSyncError(.notFound) { try await cluster.service.info(store: "missing") }
        await expectSyncError(.notFound) { try await cluster.service.pull(store: "missing", after: 0) }
        let client = try cluster.addReplica()
        try await appendNotes(client, count: 1)
        let event = try #require(try client.read { try $0.event(at: 1) })
        _ = try await cluster.service.push(store: "created", PushRequest(replica: client.replicaID, events: [event]))
        #expect(try await cluster.service.info(store: "created").head == 1)
        #expect(try await cluster.service.storeNames().contains("created"))
        // A name that differs only by case is another name, and no store is created under it: on
        // a file system that ignores case the two would be one directory.
        await expectSyncError(.invalidStoreName) {
            try await cluster.service.push(store: "Created", PushRequest(replica: client.replicaID, events: [event]))
        }
        await expectSyncError(.notFound) { try await cluster.service.info(store: "Created") }
        await expectSyncError(.notFound) { try await cluster.service.pull(store: "CREATED", after: 0) }
        #expect(try await !cluster.service.storeNames().contains("Created"))
        #expect(try await cluster.service.info(store: "created").head == 1)
    }

    /// A replica of `cluster`, an event it wrote, and the same event stamped an hour ahead of
    /// the server's clock (which the server refuses).
    private static func eventAndOneAhead(in cluster: SyncCluster) async throws -> (Store, Event, Event) {
        let client = try cluster.addReplica()
        let good = try await client.put("notes", id: "n1", fields: ["title": "one"])
        var ahead = good
        ahead.hlc = HLCTimestamp(physical: cluster.serverClock.now + 3_600_000, logical: 0)
        return (client, good, ahead)
    }

    /// A first push that is refused creates no store: the name stays free, no request finds it,
    /// and a later push creates it. Pushes to the same new name at once, some refused, leave the
    /// store with what the others appended.
    @Test(arguments: TestBackend.all)
    func aRefusedFirstPushCreatesNoStore(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let (client, good, ahead) = try await Self.eventAndOneAhead(in: cluster)
        let refused = PushRequest(replica: client.replicaID, events: [ahead])
        await expectSyncError(.clockSkew) { try await cluster.service.push(store: "fresh", refused) }
        await expectSyncError(.notFound) { try await cluster.service.info(store: "fresh") }
        await expectSyncError(.notFound) { try await cluster.service.pull(store: "fresh", after: 0) }
        #expect(try await !cluster.service.storeNames().contains("fresh"))
        if backend == .lmdb {
            #expect(!FileManager.default.fileExists(atPath: cluster.serverPath + "/fresh"))
        }
        let accepted = try await cluster.service.push(
            store: "fresh", PushRequest(replica: client.replicaID, events: [good]))
        #expect(accepted.accepted == 1 && accepted.head == 1)
        #expect(try await cluster.service.storeNames().contains("fresh"))

        for round in 0..<4 {
            let name = "race-\(round)"
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let request =
                            index % 2 == 0 || index == round
                            ? refused
                            : PushRequest(
                                replica: client.replicaID, events: [good])
                        return (try? await cluster.service.push(store: name, request)) != nil
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 8 - 4 - (round % 2 == 1 ? 1 : 0))
            #expect(try await cluster.service.info(store: name).head == 1)
            #expect(try await cluster.service.pull(store: name, after: 0).events.map(\.id) == [good.id])
        }
    }

    /// First pushes at the same moment to names that differ only by case create one store.
    @Test(arguments: TestBackend.all)
    func concurrentFirstPushesToCaseTwinsCreateOneStore(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let client = try cluster.addReplica()
        let event = try await client.put("notes", id: "n1", fields: ["title": "one"])
        let request = PushRequest(replica: client.replicaID, events: [event])
        for round in 0..<10 {
            let names = ["twin\(round)", "Twin\(round)", "TWIN\(round)"]
            let created = await withTaskGroup(of: Bool.self) { group in
                for name in names {
                    group.addTask { (try? await cluster.service.push(store: name, request)) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(created == 1, "round \(round)")
            let listed = try await cluster.service.storeNames().filter { names.contains($0) }
            #expect(listed.count == 1, "round \(round): \(listed)")
        }
    }

    /// A refused first push to a name does not make a first push to its case twin fail for
    /// good: that push is created, or told to retry while the other is still being refused.
    @Test(arguments: TestBackend.all)
    func aRefusedFirstPushNeverBlocksItsCaseTwin(backend: TestBackend) async throws {
        let cluster = try await SyncCluster.make(backend)
        defer { cluster.close() }
        let (client, good, ahead) = try await Self.eventAndOneAhead(in: cluster)
        for round in 0..<20 {
            // Refused for its stamp, or for its twin (being created, or created).
            async let refused = try? await cluster.service.push(
                store: "pair\(round)", PushRequest(replica: client.replicaID, events: [ahead]))
            var created = false
            for _ in 0..<100 where !created {
                do {
                    _ = try await cluster.service.push(
                        store: "Pair\(round)", PushRequest(replica: client.replicaID, events: [good]))
                    created = true
                } catch let error as SyncError where error.code == .unavailable {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            #expect(await refused == nil)
            #expect(created, "round \(round)")
            #expect(try await cluster.service.info(store: "Pair\(round)").head == 1)
        }
    }

    // MARK: Peer to peer

    @Test func aStoreSyncsDirectlyWithAnotherStore() async throws {
        let directory = TemporaryDirectory(prefix: "eventsync-peer")
        defer { directory.remove() }
        let laptop = try Store.open(at: directory.appending("laptop"))
        defer { laptop.close() }
        var phoneConfiguration = Store.Configuration()
        phoneConfiguration.projections = SyncService.requiredProjections
        let phone = try Store.open(at: directory.appending("phone"), configuration: phoneConfiguration)
        defer { phone.close() }
        let plain = try Store.open(at: directory.appending("plain"))
        defer { plain.close() }

        let service = try SyncService(configuration: .init(dataDirectory: directory.appending("unused")))
        defer { service.close() }
        try await service.serve(phone, as: "phone")
        try await service.serve(plain, as: "plain")
        try await phone.put("notes", id: "p", fields: ["title": "from the phone"])
        try await laptop.put("notes", id: "l", fields: ["title": "from the laptop"])
        try await plain.put("notes", id: "x", fields: ["title": "plain"])

        let report = try await Synchronizer(
            store: laptop, transport: InProcessTransport(service: service, storeName: "phone")
        ).sync()
        #expect(report.pushed == 1 && report.pulled == 1)
        #expect(try phone.item("notes", "l")?["title"] == "from the laptop")
        #expect(try laptop.item("notes", "p")?["title"] == "from the phone")
        // A store served without the digest projection syncs too (continuity checks use the event ids).
        let second = try await Synchronizer(
            store: laptop, transport: InProcessTransport(service: service, storeName: "plain")
        ).sync()
        #expect(second.pulled == 1 && second.pushed == 2)
        let again = try await Synchronizer(
            store: laptop, transport: InProcessTransport(service: service, storeName: "plain")
        ).sync()
        #expect(!again.epochChanged && again.pulled == 0)
        #expect(try StoreSnapshot(plain) == StoreSnapshot(laptop))
        // Closing the service leaves stores it did not open alone.
        service.close()
        #expect(!phone.isClosed)
    }

    /// A peer cannot write under the served store's own replica id: the store would take the
    /// event for its own write (and push it on as such).
    @Test func noPeerPushesUnderTheServedStoresOwnID() async throws {
        let directory = TemporaryDirectory(prefix: "eventsync-peer")
        defer { directory.remove() }
        let phone = try Store.open(at: directory.appending("phone"))
        defer { phone.close() }
        let service = try SyncService(configuration: .init(dataDirectory: directory.appending("unused")))
        defer { service.close() }
        try await service.serve(phone, as: "phone")
        let own = try await phone.put("notes", id: "p", fields: ["title": "from the phone"])
        let peer = InProcessTransport(service: service, storeName: "phone", credential: SyncCredential(id: "peer"))
        var forged = own
        forged.id.sequence += 1
        forged.fields = ["title": "forged"]
        // Pushed as the peer's own, the id is not its to take; relayed, the event is one the store
        // does not hold under its own id (lost or never written): the relaying store keeps it.
        await expectSyncError(.replicaNotOwned) {
            try await peer.push(PushRequest(replica: phone.replicaID, events: [forged]), check: nil)
        }
        await expectSyncError(.orphanedEvent) {
            try await peer.push(PushRequest(replica: phone.replicaID, events: [forged], relay: true), check: nil)
        }
        #expect(try phone.originSequence() == own.id.sequence)
        #expect(try phone.head() == 1)
        // What the store holds is acknowledged, whoever relays it.
        let relayed = try await peer.push(PushRequest(replica: phone.replicaID, events: [own], relay: true), check: nil)
        #expect(relayed.duplicates == 1)
    }
}
