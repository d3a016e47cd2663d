import EventStoreTestSupport
import Testing

@testable import EventStore

/// Two replicas edit the same item: after they exchange events, both hold the later write and
/// both record the same conflict; edits made after seeing the other's write record none.
struct ConflictTests {
    typealias F = ProjectionFixtures

    /// Two stores with known replica ids (`phone` < `laptop`) and their own clocks.
    final class Pair: Sendable {
        let phoneClock = ManualClock(start: F.epoch)
        let laptopClock = ManualClock(start: F.epoch)
        let directories = [TemporaryDirectory(), TemporaryDirectory()]
        let phone: Store
        let laptop: Store

        init() throws {
            phone = try Store.open(
                at: directories[0].path,
                configuration: F.configuration(clock: phoneClock, replica: ReplicaID(high: 1, low: 0)))
            laptop = try Store.open(
                at: directories[1].path,
                configuration: F.configuration(clock: laptopClock, replica: ReplicaID(high: 2, low: 0)))
        }

        func close() {
            phone.close()
            laptop.close()
            directories.forEach { $0.remove() }
        }

        /// Sends every event of `from` that `to` lacks.
        func exchange() async throws {
            let phoneEvents = try phone.read { reader in
                try (1...max(1, reader.head())).compactMap { try reader.event(at: $0) }
            }
            let laptopEvents = try laptop.read { reader in
                try (1...max(1, reader.head())).compactMap { try reader.event(at: $0) }
            }
            _ = try await laptop.ingest(phoneEvents)
            _ = try await phone.ingest(laptopEvents)
        }

        var both: [Store] { [phone, laptop] }
    }

    func conflicts(_ store: Store, _ item: String = "n1") throws -> [ConflictRecord] {
        try store.read { try $0.conflicts(collection: "notes", item: item) }
    }

    @Test func concurrentWritesOfOneFieldKeepTheLaterAndRecordTheLoserOnBothSides() async throws {
        let pair = try Pair()
        defer { pair.close() }
        let created = try await pair.phone.put("notes", id: "n1", fields: ["title": "Draft", "content": "body"])
        try await pair.exchange()

        pair.phoneClock.advance(by: 1_000)
        let early = try await pair.phone.patch("notes", id: "n1", fields: ["title": "Phone title"])
        pair.laptopClock.advance(by: 2_000)
        let late = try await pair.laptop.patch("notes", id: "n1", fields: ["title": "Laptop title"])
        #expect(early.base == created.hlc && late.base == created.hlc, "both edited the version they had seen")
        try await pair.exchange()

        for store in pair.both {
            let item = try #require(try store.item("notes", "n1"))
            #expect(item.fields == ["title": "Laptop title", "content": "body"])
            let records = try conflicts(store)
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.field == "title")
            #expect(
                record.winner.event == late.id && record.winner.value == "Laptop title" && record.winner.hlc == late.hlc
            )
            #expect(
                record.loser.event == early.id && record.loser.value == "Phone title" && record.loser.hlc == early.hlc)
            #expect(record.winner.stamp > record.loser.stamp)

            let history = try store.history(collection: "notes", item: "n1", field: "title")
            #expect(history.map(\.event.id) == [created.id, early.id, late.id], "oldest stamp first")
            #expect(history.filter(\.won).map(\.event.id) == [late.id], "history names the winning write")
            #expect(history.allSatisfy { !$0.reason.isEmpty })
            #expect(history.first { $0.event.id == early.id }?.reason.contains("\(late.id)") == true)
        }
        // The same records on both replicas, whatever the local seq that revealed them.
        let phoneRecord = try conflicts(pair.phone).first.map { [$0.field: [$0.winner, $0.loser]] }
        let laptopRecord = try conflicts(pair.laptop).first.map { [$0.field: [$0.winner, $0.loser]] }
        #expect(phoneRecord == laptopRecord)
    }

    @Test func anEditMadeAfterSeeingTheOtherWriteIsNoConflict() async throws {
        let pair = try Pair()
        defer { pair.close() }
        try await pair.phone.put("notes", id: "n1", fields: ["title": "Draft"])
        try await pair.exchange()
        pair.phoneClock.advance(by: 10)
        try await pair.phone.patch("notes", id: "n1", fields: ["title": "Phone edit"])
        try await pair.exchange()
        // The laptop saw the phone's edit; its clock is even behind, but its stamp follows the edit.
        let after = try await pair.laptop.patch("notes", id: "n1", fields: ["title": "Laptop edit"])
        try await pair.exchange()
        for store in pair.both {
            #expect(try store.item("notes", "n1")?["title"] == "Laptop edit")
            #expect(try conflicts(store).isEmpty)
            #expect(
                try store.history(collection: "notes", item: "n1", field: "title").filter(\.won).map(\.event.id) == [
                    after.id
                ])
        }
    }

    @Test func concurrentWritesOfDifferentFieldsMergeWithoutConflict() async throws {
        let pair = try Pair()
        defer { pair.close() }
        try await pair.phone.put("notes", id: "n1", fields: ["title": "Draft"])
        try await pair.exchange()
        pair.phoneClock.advance(by: 5)
        pair.laptopClock.advance(by: 7)
        try await pair.phone.patch("notes", id: "n1", fields: ["title": "Phone title"])
        try await pair.laptop.patch("notes", id: "n1", fields: ["done": true, "tags": ["work"]])
        try await pair.exchange()
        for store in pair.both {
            #expect(try store.item("notes", "n1")?.fields == ["title": "Phone title", "done": true, "tags": ["work"]])
            #expect(try conflicts(store).isEmpty)
        }
    }

    @Test func aConcurrentPutClearsAFieldTheOtherSideWrote() async throws {
        let pair = try Pair()
        defer { pair.close() }
        try await pair.phone.put("notes", id: "n1", fields: ["title": "Draft"])
        try await pair.exchange()
        pair.laptopClock.advance(by: 5)
        let patch = try await pair.laptop.patch("notes", id: "n1", fields: ["content": "typed on the laptop"])
        pair.phoneClock.advance(by: 9)
        let put = try await pair.phone.put("notes", id: "n1", fields: ["title": "Replaced"])
        try await pair.exchange()
        for store in pair.both {
            #expect(try store.item("notes", "n1")?.fields == ["title": "Replaced"])
            let records = try conflicts(store).filter { $0.field == "content" }
            #expect(records.count == 1)
            #expect(
                records.first?.winner.event == put.id && records.first.map { $0.winner.value == nil } == true,
                "the put cleared it: \(records)")
            #expect(records.first?.loser.event == patch.id && records.first?.loser.value == "typed on the laptop")
        }
    }

    @Test func deleteAgainstConcurrentEditsDependsOnlyOnTheStamps() async throws {
        let pair = try Pair()
        defer { pair.close() }
        try await pair.phone.put("notes", id: "kept", fields: ["title": "A", "content": "old"])
        try await pair.phone.put("notes", id: "gone", fields: ["title": "B"])
        try await pair.exchange()
        // "kept": deleted on the phone, then edited later on the laptop → back, with the edit only.
        pair.phoneClock.advance(by: 10)
        try await pair.phone.delete("notes", id: "kept")
        pair.laptopClock.advance(by: 20)
        try await pair.laptop.patch("notes", id: "kept", fields: ["title": "A again"])
        // "gone": edited on the laptop, then deleted later on the phone → gone.
        try await pair.laptop.patch("notes", id: "gone", fields: ["title": "B edited"])
        pair.phoneClock.advance(by: 30)
        try await pair.phone.delete("notes", id: "gone")
        try await pair.exchange()
        for store in pair.both {
            #expect(try store.item("notes", "kept")?.fields == ["title": "A again"])
            #expect(try store.item("notes", "gone") == nil)
            #expect(try store.count(in: "notes") == 1)
            #expect(try store.search("edited", in: "notes").isEmpty)
            #expect(try store.search("again", in: "notes").map(\.item.id) == ["kept"])
        }
    }

    @Test func equalClockStampsAreWonByTheGreaterReplicaOnBothSides() async throws {
        let pair = try Pair()
        defer { pair.close() }
        try await pair.phone.put("notes", id: "n1", fields: ["title": "Draft"])
        try await pair.exchange()
        // Both clocks read the same millisecond, and both stores have issued the same stamps.
        pair.phoneClock.set(F.epoch + 50)
        pair.laptopClock.set(F.epoch + 50)
        let phoneWrite = try await pair.phone.patch("notes", id: "n1", fields: ["title": "phone"])
        let laptopWrite = try await pair.laptop.patch("notes", id: "n1", fields: ["title": "laptop"])
        #expect(phoneWrite.hlc == laptopWrite.hlc)
        try await pair.exchange()
        for store in pair.both {
            #expect(try store.item("notes", "n1")?["title"] == "laptop", "replica 2 orders after replica 1")
            #expect(try conflicts(store).first?.loser.event == phoneWrite.id)
            let reason = try store.history(collection: "notes", item: "n1", field: "title").first {
                $0.event.id == phoneWrite.id
            }?.reason
            #expect(reason?.contains("equal clock stamps") == true, "\(reason ?? "")")
        }
    }

    @Test func conflictsAreListedPerItemPerCollectionOrAll() async throws {
        let pair = try Pair()
        defer { pair.close() }
        for id in ["n1", "n10", "n2"] { try await pair.phone.put("notes", id: id, fields: ["title": "Draft"]) }
        try await pair.phone.put("tasks", id: "n1", fields: ["title": "Draft"])
        try await pair.exchange()
        pair.phoneClock.advance(by: 10)
        pair.laptopClock.advance(by: 20)
        for (collection, id) in [("notes", "n1"), ("notes", "n10"), ("notes", "n2"), ("tasks", "n1")] {
            try await pair.phone.patch(collection, id: id, fields: ["title": "phone"])
            try await pair.laptop.patch(collection, id: id, fields: ["title": "laptop"])
        }
        try await pair.exchange()
        for store in pair.both {
            try store.read { reader throws in
                #expect(try reader.conflicts().count == 4)
                #expect(try reader.conflicts(collection: "notes").map(\.item) == ["n1", "n10", "n2"])
                #expect(
                    try reader.conflicts(collection: "notes", item: "n1").map(\.item) == ["n1"], "n10 is another item")
                #expect(try reader.conflicts(collection: "tasks").map { "\($0.collection)/\($0.item)" } == ["tasks/n1"])
                #expect(try reader.conflicts(collection: "notes", limit: 2).count == 2)
                #expect(try reader.conflicts(collection: "note").isEmpty, "no prefix matches")
            }
        }
    }
}
