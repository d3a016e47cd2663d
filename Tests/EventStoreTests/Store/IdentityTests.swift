import EventStore
import EventStoreTestSupport
import Testing

/// An event id names exactly one event; a store moves its unpublished events to a new replica id
/// without losing a write.
@Suite("Event and replica identity")
struct IdentityTests {
    // MARK: Event ids bound to content

    @Test func aKnownIDWithOtherContentIsAConflictAndChangesNothing() async throws {
        try await withTemporaryStore { store in
            let other = ReplicaID(high: 7, low: 7)
            let event = Event(
                id: EventID(origin: other, sequence: 1), hlc: HLCTimestamp(physical: 1_700_000_000_000, logical: 0),
                collection: "notes", item: "n1", operation: .put, fields: ["title": "original"])
            _ = try await store.ingest([event])
            let duplicate = try await store.ingest([event])
            #expect(duplicate.duplicates == [event.id] && duplicate.appended.isEmpty)

            var forged = event
            forged.fields = ["title": "forged"]
            #expect(forged.digest != event.digest)
            let second = Event(
                id: EventID(origin: other, sequence: 2), hlc: HLCTimestamp(physical: 1_700_000_000_001, logical: 0),
                collection: "notes", item: "n2", operation: .put, fields: ["title": "fine"])
            do {
                _ = try await store.ingest([second, forged])
                Issue.record("a known id with other content was accepted")
            } catch let error as EventStoreError {
                #expect(error.code == .eventConflict)
                #expect(
                    error.eventIDConflict == EventIDConflict(id: event.id, held: event.digest, received: forged.digest))
            }
            #expect(try store.head() == 1, "the batch is refused whole")
            #expect(try store.item("notes", "n1")?["title"] == "original")
            #expect(try store.item("notes", "n2") == nil)
        }
    }

    @Test func theDigestCoversEverythingButTheSeq() {
        let event = Event(
            seq: 4, id: EventID(origin: ReplicaID(high: 1, low: 2), sequence: 3), hlc: HLCTimestamp(rawValue: 99),
            collection: "c", item: "i", operation: .patch, fields: ["a": 1])
        var moved = event
        moved.seq = 40
        #expect(moved.digest == event.digest && moved.hasSameContent(as: event))
        for change in [
            { (e: inout Event) in e.hlc = HLCTimestamp(rawValue: 100) }, { $0.base = HLCTimestamp(rawValue: 1) },
            { $0.id.sequence = 4 }, { $0.item = "j" }, { $0.fields = ["a": 2] }, { $0.schema = 1 },
        ] {
            var other = event
            change(&other)
            #expect(other.digest != event.digest && !other.hasSameContent(as: event))
        }
        #expect(EventID("\(event.id)") == event.id)
        #expect(
            EventID("xyz/1") == nil && EventID("\(event.id.origin)/-1") == nil && EventID("\(event.id.origin)") == nil)
    }

    // MARK: Restamping

    @Test func restampingMovesTheSuffixToANewIDAndKeepsEveryWrite() async throws {
        try await withTemporaryStore { store in
            let original = store.replicaID
            let events = try await store.append([
                .put("notes", id: "n1", fields: ["title": "one"]), .put("notes", id: "n2", fields: ["title": "two"]),
                .patch("notes", id: "n1", fields: ["title": "one, edited"]),
            ])
            let before = try StoreSnapshot(store)
            let change = try await store.restamp(from: events[1].id)
            #expect(
                change.previous == original && change.current != original && change.restampedUnder == change.current)
            #expect(change.restamped.map(\.seq) == [2, 3])
            #expect(change.restamped.map(\.from) == [events[1].id, events[2].id])
            #expect(change.restamped.map(\.to) == [1, 2].map { EventID(origin: change.current, sequence: $0) })
            #expect(store.replicaID == change.current)
            #expect(try store.ownReplicaIDs() == [change.current, original])
            #expect(try store.originSequence() == 2)

            #expect(try store.read { try $0.event(at: 1)?.id } == events[0].id, "published events keep their ids")
            let moved = try #require(try store.read { try $0.event(at: 3) })
            #expect(moved.hlc == events[2].hlc && moved.fields == events[2].fields, "same stamp and fields")
            #expect(try store.read { try $0.seq(of: events[2].id) } == nil)
            #expect(try StoreSnapshot(store) == before, "every item and search result is the same")
            #expect(try store.verify().isConsistent)

            let next = try await store.put("notes", id: "n3", fields: ["title": "three"])
            #expect(next.id == EventID(origin: change.current, sequence: 3))
        }
    }

    @Test func restampingAnOlderIDKeepsTheCurrentOne() async throws {
        try await withTemporaryStore { store in
            let original = store.replicaID
            let first = try await store.put("notes", id: "n1", fields: ["title": "one"])
            let rotated = try await store.restamp(from: EventID(origin: original, sequence: 2))
            #expect(rotated.restamped.isEmpty && rotated.current != original, "nothing to move: only a new id")
            let change = try await store.restamp(from: first.id)
            #expect(change.current == rotated.current && change.restampedUnder != rotated.current)
            #expect(try store.ownReplicaIDs() == [rotated.current, original, change.restampedUnder])
            #expect(try store.read { try $0.event(at: 1)?.id } == EventID(origin: change.restampedUnder, sequence: 1))
            #expect(try store.verify().isConsistent)
            await #expect(throws: EventStoreError.self) {
                try await store.restamp(from: EventID(origin: ReplicaID(high: 9, low: 9), sequence: 1))
            }
        }
    }

    @Test func aNewReplicaIDSurvivesReopening() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (current, original) = try await { () async throws -> (ReplicaID, ReplicaID) in
            let store = try Store.open(at: directory.path)
            defer { store.close() }
            let original = store.replicaID
            let event = try await store.put("notes", id: "n1", fields: ["title": "one"])
            return (try await store.restamp(from: event.id).current, original)
        }()
        let reopened = try Store.open(at: directory.path)
        defer { reopened.close() }
        #expect(reopened.replicaID == current)
        #expect(try reopened.ownReplicaIDs() == [current, original])
        #expect(try reopened.verify().isConsistent)
    }

    @Test func adoptingKeepsAnotherReplicasWriteUnderAnIDOfTheStoresOwn() async throws {
        try await withTemporaryStore { store in
            let other = ReplicaID(high: 5, low: 5)
            let foreign = Event(
                id: EventID(origin: other, sequence: 3), hlc: HLCTimestamp(physical: 1_700_000_000_000, logical: 0),
                collection: "notes", item: "n1", operation: .put, fields: ["title": "theirs"])
            _ = try await store.ingest([foreign])
            #expect(try store.lastSequence(of: other) == 3)
            await #expect(throws: EventStoreError.self) { try await store.adopt(EventID(origin: other, sequence: 4)) }
            let own = try await store.put("notes", id: "n2", fields: ["title": "mine"])
            await #expect(throws: EventStoreError.self) { try await store.adopt(own.id) }

            let change = try await store.adopt(foreign.id)
            #expect(change.current == store.replicaID && change.restamped.count == 1)
            let adopted = try #require(try store.read { try $0.event(at: 1) })
            #expect(adopted.id == EventID(origin: change.restampedUnder, sequence: 1))
            #expect(adopted.hlc == foreign.hlc && adopted.fields == foreign.fields)
            #expect(try store.ownReplicaIDs().contains(change.restampedUnder))
            #expect(try store.lastSequence(of: other) == 0)
            // The other replica's event can now be received as well, and both writes are kept.
            var theirs = foreign
            theirs.item = "n3"
            _ = try await store.ingest([theirs])
            #expect(try store.item("notes", "n1")?["title"] == "theirs")
            #expect(try store.item("notes", "n3")?["title"] == "theirs")
            #expect(try store.verify().isConsistent)
        }
    }
}
