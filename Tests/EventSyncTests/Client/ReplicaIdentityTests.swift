import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Testing

/// An event id names one event; a replica id belongs to one credential; a store restored from
/// a backup or copied to another device loses nothing and corrupts nobody.
@Suite("Replica identity")
struct ReplicaIdentityTests {
    static let alice = SyncCredential(id: "alice")
    static let mallory = SyncCredential(id: "mallory")
    static let bob = SyncCredential(id: "bob")

    static func title(_ store: Store, _ id: String) throws -> Value? { try store.item("notes", id)?["title"] }

    /// A cluster with one replica that wrote one note (not pushed yet).
    static func ownedNote() async throws -> (SyncCluster, Store, Event) {
        let cluster = try SyncCluster()
        let owner = try cluster.addReplica()
        return (cluster, owner, try await owner.put("notes", id: "n1", fields: ["title": "one"]))
    }

    /// Relays `event`, one of `owner`'s, through `transport`.
    static func relay(_ event: Event, of owner: Store, by transport: InProcessTransport) async throws -> PushResponse {
        try await transport.push(PushRequest(replica: owner.replicaID, events: [event], relay: true), check: nil)
    }

    /// Every store shows `titles` (note id → title) and holds what the last one holds.
    static func expectConverged(
        _ stores: [Store], titles: [String: Value], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for store in stores {
            for (id, title) in titles {
                #expect(try Self.title(store, id) == title, sourceLocation: sourceLocation)
            }
            #expect(try StoreSnapshot(store) == StoreSnapshot(stores.last!), sourceLocation: sourceLocation)
        }
    }

    // MARK: Restored and copied replicas

    @Test("a replica restored from an older backup keeps its new work and gets back what it lost")
    func aRestoredReplicaLosesNothing() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let transport = cluster.transport(credential: Self.alice)
        // Steps of the report: import n1 and n2, sync, back up, edit n1, sync, restore the backup.
        let (oldID, lostID, backup) = try await { () async throws -> (ReplicaID, EventID, String) in
            let phone = try cluster.addReplica()
            try await phone.append([
                .put("notes", id: "n1", fields: ["title": "one"]), .put("notes", id: "n2", fields: ["title": "two"]),
            ])
            try await cluster.synchronizer(0, transport: transport).sync()
            let backup = try cluster.backUpReplica(0)
            let lost = try await phone.patch("notes", id: "n1", fields: ["title": "edit after backup"])
            try await cluster.synchronizer(0, transport: transport).sync()
            return (phone.replicaID, lost.id, backup)
        }()
        let restored = try cluster.restoreReplica(0, from: backup)
        #expect(restored.replicaID == oldID, "the backup carries the old replica id")
        #expect(
            try restored.read { try $0.seq(of: lostID) } == nil,
            "the restored store lacks the edit made after the backup")

        cluster.advance(by: 1000)
        try await restored.patch("notes", id: "n2", fields: ["title": "new work after restore"])
        let report = try await cluster.synchronizer(0, transport: transport).sync()
        #expect(report.replicaChanges.count >= 1, "\(report)")
        #expect(restored.replicaID != oldID, "the restored store writes under a new id")
        #expect(try restored.read { try $0.seq(of: lostID) } != nil, "the event it lost came back under its own id")

        let fresh = try cluster.addReplica()
        try await cluster.synchronizer(1, transport: cluster.transport(credential: Self.alice)).sync()
        try await cluster.synchronizer(0, transport: transport).sync()
        let server = try await cluster.serverStore()
        for store in [restored, fresh, server] {
            #expect(try Self.title(store, "n1") == "edit after backup")
            #expect(try Self.title(store, "n2") == "new work after restore")
        }
        #expect(try StoreSnapshot(restored) == StoreSnapshot(fresh))
        #expect(try StoreSnapshot(restored) == StoreSnapshot(server))
        #expect(try restored.verify().isConsistent)
        // Nothing left to do, and nothing pending.
        let again = try await cluster.synchronizer(0, transport: transport).sync()
        #expect(again.pushed == 0 && again.pulled == 0 && again.replicaChanges.isEmpty, "\(again)")
        #expect(try cluster.synchronizer(0, transport: transport).pendingCount() == 0)
    }

    @Test("a restored replica that wrote more than it lost still moves its new writes to a new id")
    func aRestoredReplicaThatWroteMore() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let backup = try await { () async throws -> String in
            let phone = try cluster.addReplica()
            try await appendNotes(phone, count: 2, prefix: "a")
            try await cluster.synchronizer(0).sync()
            let backup = try cluster.backUpReplica(0)
            try await phone.patch("notes", id: "a0", fields: ["title": "lost one"])
            try await cluster.synchronizer(0).sync()
            return backup
        }()
        let restored = try cluster.restoreReplica(0, from: backup)
        cluster.advance(by: 1000)
        // Three writes after the restore: origin sequences 3, 4, 5 against the server's 3.
        for index in 0..<3 {
            try await restored.patch("notes", id: "a1", fields: ["title": .string("after restore \(index)")])
        }
        let report = try await cluster.synchronizer(0).sync()
        #expect(report.replicaChanges.map(\.restamped.count).reduce(0, +) == 3, "\(report)")
        let server = try await cluster.serverStore()
        #expect(try Self.title(server, "a0") == "lost one")
        #expect(try Self.title(server, "a1") == "after restore 2")
        #expect(try StoreSnapshot(restored) == StoreSnapshot(server))
        #expect(try server.head() == 6)
    }

    @Test("two live copies of one store both keep writing: every write reaches everyone")
    func twoLiveCopies() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let laptop = try cluster.addReplica()
        try await appendNotes(laptop, count: 3, prefix: "n")
        try await cluster.synchronizer(0).sync()
        let copy = try cluster.addReplica(copying: try cluster.backUpReplica(0))
        #expect(copy.replicaID == laptop.replicaID)
        for round in 0..<3 {
            cluster.advance(by: 500)
            try await laptop.put("notes", id: "laptop-\(round)", fields: ["title": "laptop \(round)"])
            try await copy.put("notes", id: "copy-\(round)", fields: ["title": "copy \(round)"])
            try await cluster.synchronizer(round % 2).sync()
            try await cluster.synchronizer(1 - round % 2).sync()
        }
        for index in 0..<2 { try await cluster.synchronizer(index).sync() }
        #expect(laptop.replicaID != copy.replicaID, "one of the two moved to a new id")
        let server = try await cluster.serverStore()
        for store in [laptop, copy, server] {
            for round in 0..<3 {
                #expect(try Self.title(store, "laptop-\(round)") == .string("laptop \(round)"))
                #expect(try Self.title(store, "copy-\(round)") == .string("copy \(round)"))
            }
        }
        #expect(try StoreSnapshot(laptop) == StoreSnapshot(copy))
        #expect(try StoreSnapshot(laptop) == StoreSnapshot(server))
    }

    // MARK: Forged ids and ownership

    @Test("a push in another replica's name is refused, and the victim's edit reaches everyone")
    func aForgedOriginIsRefused() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let victim = try cluster.addReplica()
        try await victim.put("notes", id: "n1", fields: ["title": "mine"])
        try await cluster.synchronizer(0, transport: cluster.transport(credential: Self.alice)).sync()
        let attacker = cluster.transport(credential: Self.mallory)
        let headBefore = try await cluster.serverStore().head()

        // The victim's next id, with other content.
        var forged = try victim.read { try $0.event(at: 1)! }
        forged.id.sequence = 2
        forged.hlc = HLCTimestamp(rawValue: forged.hlc.rawValue + 1)
        forged.fields = ["title": "forged"]
        await expectSyncError(.foreignOrigin) {
            try await attacker.push(PushRequest(replica: ReplicaID(high: 1, low: 2), events: [forged]), check: nil)
        }
        await expectSyncError(.replicaNotOwned) {
            try await attacker.push(PushRequest(replica: victim.replicaID, events: [forged]), check: nil)
        }
        // As a relay: stamped after the owner's last push, it may be a write the owner made since
        // and will push, so it waits for the owner...
        await expectSyncError(.replicaNotOwned) {
            try await attacker.push(PushRequest(replica: victim.replicaID, events: [forged], relay: true), check: nil)
        }
        // ... while one stamped before that push, past what the owner declared it holds then, is
        // one the owner does not have: the relayer may only keep it under an id of its own.
        forged.hlc = HLCTimestamp(rawValue: forged.hlc.rawValue - 2)
        await expectSyncError(.orphanedEvent) {
            try await attacker.push(PushRequest(replica: victim.replicaID, events: [forged], relay: true), check: nil)
        }
        #expect(try await cluster.serverStore().head() == headBefore)

        try await victim.patch("notes", id: "n1", fields: ["title": "my real edit"])
        let report = try await cluster.synchronizer(0, transport: cluster.transport(credential: Self.alice)).sync()
        #expect(report.pushed == 1 && report.replicaChanges.isEmpty, "\(report)")
        let other = try cluster.addReplica()
        try await cluster.synchronizer(1, transport: cluster.transport(credential: Self.mallory)).sync()
        #expect(try Self.title(other, "n1") == "my real edit")
    }

    @Test("a peer relays its owner's newest write before the owner pushes it: the write waits and is kept once")
    func aRelayAheadOfItsOwnersPushWaits() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let owner = try cluster.addReplica()
        let peer = try cluster.addReplica()
        let ownerSync = cluster.synchronizer(0, transport: cluster.transport(credential: Self.alice))
        let peerSync = cluster.synchronizer(1, transport: cluster.transport(credential: Self.bob))
        try await owner.put("notes", id: "n1", fields: ["title": "one"])
        try await ownerSync.sync()
        try await peerSync.sync()
        cluster.advance(by: 100)
        // The owner's next write reaches the peer another way (a second remote, a direct
        // exchange) before the owner pushes it.
        let newest = try await owner.patch("notes", id: "n1", fields: ["title": "newest"])
        _ = try await peer.ingest([newest])
        let relayed = try await peerSync.sync()
        #expect(relayed.replicaChanges.isEmpty, "the peer keeps the owner's write under the owner's id: \(relayed)")
        #expect(try peerSync.pendingCount() == 1, "the relay waits for its owner")
        let server = try await cluster.serverStore()
        #expect(try server.head() == 1)

        let pushed = try await ownerSync.sync()
        #expect(pushed.pushed == 1 && pushed.replicaChanges.isEmpty, "\(pushed)")
        let again = try await peerSync.sync()
        #expect(again.replicaChanges.isEmpty, "\(again)")
        #expect(try peerSync.pendingCount() == 0)
        #expect(try server.head() == 2, "the write is held once")
        #expect(try server.read { try $0.event(id: newest.id) } != nil)
        #expect(try StoreSnapshot(peer) == StoreSnapshot(server))
        #expect(try StoreSnapshot(owner) == StoreSnapshot(server))
    }

    @Test("a restored owner with nothing to push declares alone: a peer's relay of the write it lost is kept once")
    func aRestoredIdleOwnerDeclares() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        var configuration = Synchronizer.Configuration()
        configuration.declarationInterval = .seconds(60)
        func ownerSync() -> Synchronizer {
            cluster.synchronizer(1, transport: cluster.transport(credential: Self.alice), configuration: configuration)
        }
        let peer = try cluster.addReplica()
        let peerSync = cluster.synchronizer(0, transport: cluster.transport(credential: Self.bob))
        let (lost, backup) = try await { () async throws -> (Event, String) in
            let owner = try cluster.addReplica()
            try await owner.put("notes", id: "n1", fields: ["title": "one"])
            try await ownerSync().sync()
            try await peerSync.sync()
            let backup = try cluster.backUpReplica(1)
            cluster.advance(by: 100)
            // The owner's next write reaches the peer another way, then the owner's device is
            // restored from the backup: the owner lost the write, and has nothing to push.
            let lost = try await owner.patch("notes", id: "n1", fields: ["title": "lost by its owner"])
            _ = try await peer.ingest([lost])
            return (lost, backup)
        }()
        let restored = try cluster.restoreReplica(1, from: backup)
        #expect(try restored.read { try $0.event(id: lost.id) } == nil)
        let refused = try await peerSync.sync()
        #expect(refused.relaysRefused == 1, "\(refused)")
        #expect(try peerSync.pendingCount() == 1)

        // Within the interval of its last declaration, the idle owner sends nothing: the relay waits.
        cluster.advance(by: 1_000)
        let quiet = try await ownerSync().sync()
        #expect(quiet.pushed == 0 && quiet.replicaChanges.isEmpty, "\(quiet)")
        #expect(try await peerSync.sync().relaysRefused == 1)
        #expect(try peerSync.pendingCount() == 1)

        // Past it, the owner's sync declares how far it holds its id, and the peer keeps the
        // write under an id of its own: it reaches everyone, once.
        cluster.advance(by: 60_000)
        let declared = try await ownerSync().sync()
        #expect(declared.pushed == 0, "\(declared)")
        #expect(try ownerSync().cursor().declared[restored.replicaID] == cluster.clocks[1].now)
        let adopted = try await peerSync.sync()
        #expect(adopted.replicaChanges.count == 1, "\(adopted)")
        #expect(try peerSync.pendingCount() == 0)
        try await ownerSync().sync()
        let server = try await cluster.serverStore()
        #expect(try server.head() == 2, "the lost write is held once, under the peer's id")
        try Self.expectConverged([restored, peer, server], titles: ["n1": "lost by its owner"])
    }

    @Test(
        "a restored owner that moves to a new id declares the id it left: a peer's relay of its lost write is kept once"
    )
    func aRestoredOwnerDeclaresTheIDItLeft() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let peer = try cluster.addReplica()
        let peerSync = cluster.synchronizer(0, transport: cluster.transport(credential: Self.bob))
        func ownerSync() -> Synchronizer {
            cluster.synchronizer(1, transport: cluster.transport(credential: Self.alice))
        }
        let (oldID, lost, backup) = try await { () async throws -> (ReplicaID, Event, String) in
            let owner = try cluster.addReplica()
            try await owner.put("notes", id: "n1", fields: ["title": "one"])
            try await ownerSync().sync()
            let backup = try cluster.backUpReplica(1)
            cluster.advance(by: 100)
            try await owner.put("notes", id: "n2", fields: ["title": "two"])
            try await ownerSync().sync()
            cluster.advance(by: 100)
            // Reaches the peer another way and is never pushed: the restore loses it.
            let lost = try await owner.patch("notes", id: "n1", fields: ["title": "lost by its owner"])
            try await peerSync.sync()
            _ = try await peer.ingest([lost])
            return (owner.replicaID, lost, backup)
        }()
        #expect(try await peerSync.sync().relaysRefused == 1)
        let restored = try cluster.restoreReplica(1, from: backup)
        let moved = try await ownerSync().sync()
        #expect(moved.replicaChanges.count == 1 && restored.replicaID != oldID, "\(moved)")
        #expect(try ownerSync().cursor().declared[oldID] != nil, "the id it left is declared")
        let adopted = try await peerSync.sync()
        #expect(adopted.replicaChanges.count == 1, "\(adopted)")
        #expect(try peerSync.pendingCount() == 0)
        try await ownerSync().sync()
        let server = try await cluster.serverStore()
        #expect(try server.read { try $0.event(id: lost.id) } == nil)
        try Self.expectConverged([restored, peer, server], titles: ["n1": "lost by its owner", "n2": "two"])
    }

    @Test("a push of no events declares only for an id its credential owns, and claims none")
    func anEmptyPushClaimsNothing() async throws {
        let (cluster, owner, first) = try await Self.ownedNote()
        defer { cluster.close() }
        let (alice, mallory) = (cluster.transport(credential: Self.alice), cluster.transport(credential: Self.mallory))
        // The store exists (another replica pushed); Mallory declares under the owner's id before
        // the owner pushed: no claim, no effect.
        let other = try cluster.addReplica()
        try await other.put("notes", id: "o1", fields: ["title": "other"])
        try await cluster.synchronizer(1, transport: cluster.transport(credential: Self.bob)).sync()
        let clock = HLCTimestamp(physical: cluster.serverClock.now, logical: 0)
        let answer = try await mallory.push(
            PushRequest(replica: owner.replicaID, events: [], through: 0, clock: clock), check: nil)
        #expect(answer.accepted == 0 && answer.head == 1)
        let report = try await cluster.synchronizer(0, transport: alice).sync()
        #expect(report.pushed == 1 && report.replicaChanges.isEmpty, "the id is still the owner's to claim: \(report)")
        // Nor does Mallory's declaration count against the owner's events once Alice owns the id:
        // an event stamped after the owner's last push waits for the owner.
        var relayed = first
        relayed.id.sequence = 2
        relayed.hlc = HLCTimestamp(physical: cluster.serverClock.now + 10, logical: 0)
        relayed.fields = ["title": "relayed"]
        let later = HLCTimestamp(physical: cluster.serverClock.now + 20, logical: 0)
        _ = try await mallory.push(
            PushRequest(replica: owner.replicaID, events: [], through: 0, clock: later), check: nil)
        await expectSyncError(.replicaNotOwned) { try await Self.relay(relayed, of: owner, by: mallory) }
        // The owner's own declaration alone does count.
        _ = try await alice.push(
            PushRequest(replica: owner.replicaID, events: [], through: 1, clock: later), check: nil)
        await expectSyncError(.orphanedEvent) { try await Self.relay(relayed, of: owner, by: mallory) }
        #expect(try await cluster.serverStore().head() == 2)
        // A declaration alone creates no store.
        let elsewhere = InProcessTransport(service: cluster.service, storeName: "elsewhere", credential: Self.alice)
        await expectSyncError(.notFound) {
            try await elsewhere.push(PushRequest(replica: owner.replicaID, events: [], through: 0), check: nil)
        }
        #expect(try await !cluster.service.storeNames().contains("elsewhere"))
    }

    @Test("an owner's declared clock disowns the events stamped before it, counted no further than the server's clock")
    func aDeclaredClockDisownsOnlyEarlierEvents() async throws {
        let (cluster, owner, first) = try await Self.ownedNote()
        defer { cluster.close() }
        let (alice, mallory) = (cluster.transport(credential: Self.alice), cluster.transport(credential: Self.mallory))
        func relay(_ event: Event) async throws -> PushResponse { try await Self.relay(event, of: owner, by: mallory) }
        // A write the owner made and lost (a restored device), then a push that declares it holds
        // nothing past its first event, with a clock past the lost write's stamp.
        var lost = first
        lost.id.sequence = 2
        lost.hlc = HLCTimestamp(rawValue: first.hlc.rawValue + 10)
        lost.fields = ["title": "lost"]
        let floor = HLCTimestamp(rawValue: first.hlc.rawValue + 1_000)
        _ = try await alice.push(
            PushRequest(replica: owner.replicaID, events: [first], through: 1, clock: floor), check: nil)
        await expectSyncError(.orphanedEvent) { try await relay(lost) }
        // Stamped after the declared clock, it may be a later write of the owner: it waits.
        var later = lost
        later.hlc = HLCTimestamp(rawValue: floor.rawValue + 1)
        await expectSyncError(.replicaNotOwned) { try await relay(later) }
        // A clock declared far ahead counts no further than the server's clock and skew bound.
        let far = HLCTimestamp(physical: cluster.serverClock.now + 3_600_000, logical: 0)
        _ = try await alice.push(
            PushRequest(replica: owner.replicaID, events: [first], through: 1, clock: far), check: nil)
        var ahead = lost
        ahead.hlc = HLCTimestamp(physical: cluster.serverClock.now + 120_000, logical: 0)
        await expectSyncError(.replicaNotOwned) { try await relay(ahead) }
        #expect(try await cluster.serverStore().head() == 1)
        // The declared clock travels in the JSON body too.
        let request = PushRequest(replica: owner.replicaID, events: [first], through: 1, clock: floor)
        #expect(try PushRequest(json: request.jsonBytes()) == request)
    }

    @Test("an id claimed before its replica pushed: the replica moves to a new id and loses nothing")
    func aSquattedReplicaIDMovesOn() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let victim = try cluster.addReplica()
        let events = try await victim.append([
            .put("notes", id: "n1", fields: ["title": "first"]), .put("notes", id: "n2", fields: ["title": "second"]),
        ])
        var forged = events[0]
        forged.fields = ["title": "squatted"]
        _ = try await cluster.transport(credential: Self.mallory).push(
            PushRequest(replica: victim.replicaID, events: [forged]), check: nil)

        let report = try await cluster.synchronizer(0, transport: cluster.transport(credential: Self.alice)).sync()
        #expect(!report.replicaChanges.isEmpty, "\(report)")
        #expect(
            report.replicaChanges.map(\.restamped.count).reduce(0, +) == 2, "both writes moved to new ids: \(report)")
        let server = try await cluster.serverStore()
        #expect(try server.read { try $0.event(id: events[0].id)?.fields["title"] } == "squatted")
        // The forged write is an ordinary older write; the victim's writes win on their own stamps.
        #expect(try Self.title(server, "n2") == "second")
        #expect(try StoreSnapshot(victim) == StoreSnapshot(server))
    }

    @Test("the same id with other content is a 409-style conflict, never a duplicate")
    func aConflictingDuplicateIsRefused() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let client = try cluster.addReplica()
        let events = try await client.append([.put("notes", id: "n1", fields: ["title": "one"])])
        let transport = cluster.transport(encodesJSON: true, credential: Self.alice)
        _ = try await transport.push(PushRequest(replica: client.replicaID, events: events), check: nil)
        let again = try await transport.push(PushRequest(replica: client.replicaID, events: events), check: nil)
        #expect(again.duplicates == 1 && again.accepted == 0)
        var changed = events[0]
        changed.fields = ["title": "other content"]
        do {
            _ = try await transport.push(PushRequest(replica: client.replicaID, events: [changed]), check: nil)
            Issue.record("a conflicting duplicate was accepted")
        } catch let error as SyncError {
            #expect(error.code == .eventConflict)
            #expect(error.code.status == 409)
            #expect(error.eventID == events[0].id)
            #expect(
                error.message.contains(events[0].digest.description)
                    && error.message.contains(changed.digest.description))
        }
        #expect(try await cluster.serverStore().read { try $0.event(id: events[0].id)?.fields["title"] } == "one")
    }

    @Test("a pulled event under an id the store holds as another replica's other event: both writes survive")
    func aForeignConflictInAPullKeepsBothWrites() async throws {
        let cluster = try SyncCluster()
        defer { cluster.close() }
        let writer = try cluster.addReplica()
        let events = try await writer.append([.put("notes", id: "n1", fields: ["title": "server's"])])
        try await cluster.synchronizer(0).sync()
        // A peer that accepted a forged event before ids were bound to content.
        let reader = try cluster.addReplica()
        var other = events[0]
        other.item = "n2"
        other.fields = ["title": "the peer's event under the same id"]
        _ = try await reader.ingest([other])
        let report = try await cluster.synchronizer(1).sync()
        #expect(report.replicaChanges.count == 1, "\(report)")
        let adopted = try #require(report.replicaChanges.first?.restamped.first)
        #expect(
            adopted.from == events[0].id && adopted.to.origin != writer.replicaID
                && adopted.to.origin != reader.replicaID)
        #expect(try reader.ownReplicaIDs().contains(adopted.to.origin))
        try await cluster.synchronizer(0).sync()
        let server = try await cluster.serverStore()
        for store in [writer, reader, server] {
            #expect(try Self.title(store, "n1") == "server's")
            #expect(try Self.title(store, "n2") == "the peer's event under the same id")
            #expect(try store.read { try $0.event(id: events[0].id)?.item } == "n1")
        }
        #expect(try StoreSnapshot(writer) == StoreSnapshot(reader))
    }
}
