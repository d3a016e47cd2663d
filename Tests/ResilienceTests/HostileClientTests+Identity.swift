import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import NIOHTTP1
import SyncTestSupport
import Testing

/// Forged and reused event ids against a real server: refused with a 403 or a 409, nothing
/// appended, and the real replica's writes reach everyone.
extension HostileClientTests {
    @Test(
        "forged origins → 403, a replica id of another token → 403, a known id with other content → 409",
        arguments: TestBackend.all)
    func forgedIdentities(backend: TestBackend) async throws {
        try await HostileClientTests.withSetup(backend: backend) { setup in
            let victim = setup.client
            let first = try await setup.server.send(
                .POST, "/v1/stores/notes/events", token: ServerHarness.notesToken, body: setup.validBody)
            #expect(first.status == 200, "\(first.text)")
            let attacker = ReplicaID(high: 0xbad, low: 0xbad)

            // The victim's next id, with the attacker's content.
            var forged = setup.freshEvents[1]
            forged.id.sequence += 1
            forged.hlc = HLCTimestamp(rawValue: forged.hlc.rawValue + 1)
            forged.fields = ["title": "forged"]
            for (label, request) in [
                ("victim's id as the attacker's own replica", PushRequest(replica: victim.replicaID, events: [forged])),
                ("victim's id relayed", PushRequest(replica: victim.replicaID, events: [forged], relay: true)),
            ] {
                try await setup.expectRefused(label, body: request.jsonBytes(), status: 403)
                let reply = try await setup.server.send(
                    .POST, "/v1/stores/notes/events", token: ServerHarness.adminToken, body: request.jsonBytes())
                #expect(reply.text.contains("replica-not-owned"), "\(label): \(reply.text)")
            }
            let foreign = PushRequest(replica: attacker, events: [forged]).jsonBytes()
            try await setup.expectRefused("victim's event under another replica", body: foreign, status: 403)
            let foreignReply = try await setup.server.send(
                .POST, "/v1/stores/notes/events", token: ServerHarness.adminToken, body: foreign)
            #expect(foreignReply.text.contains("foreign-origin"), "\(foreignReply.text)")

            // A known id with other content, even from its owner's token: a conflict, not a duplicate.
            var changed = setup.freshEvents[0]
            changed.fields = ["title": "other content under a published id"]
            let conflict = PushRequest(replica: victim.replicaID, events: [changed]).jsonBytes()
            try await setup.expectRefused(
                "conflicting duplicate", token: ServerHarness.notesToken, body: conflict, status: 409)
            let conflictReply = try await setup.server.send(
                .POST, "/v1/stores/notes/events", token: ServerHarness.notesToken, body: conflict)
            #expect(conflictReply.text.contains("\"eventId\":\"\(changed.id)\""), "\(conflictReply.text)")
            #expect(conflictReply.text.contains("event-conflict"), "\(conflictReply.text)")

            // The victim's real next edit syncs, and a fresh replica sees it.
            let victimSync = Synchronizer(
                store: victim,
                transport: HTTPTransport(
                    baseURL: setup.server.baseURL, token: ServerHarness.notesToken, storeName: "notes"))
            try await victim.patch("notes", id: "h2", fields: ["title": "the victim's real edit"])
            let report = try await victimSync.sync()
            #expect(report.replicaChanges.isEmpty, "\(report)")
            let fresh = try Store.open(at: setup.directory.appending("fresh"))
            defer { fresh.close() }
            try await Synchronizer(
                store: fresh,
                transport: HTTPTransport(
                    baseURL: setup.server.baseURL, token: ServerHarness.adminToken, storeName: "notes")
            ).sync()
            #expect(try fresh.item("notes", "h2")?["title"] == "the victim's real edit")
            #expect(try fresh.item("notes", "h1")?["title"] == "hello")
            #expect(try StoreSnapshot(fresh) == StoreSnapshot(victim))
        }
    }
}
