import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Replay: the state at a seq or a clock stamp equals the merge of exactly the events up to it;
/// step-by-step replays say what each event did to each field; field histories name one winner.
struct ReplayTests {
    /// Local writes to a few items of two collections, interleaved with events from two other
    /// replicas stamped somewhat before or after the local clock. Returns the whole log.
    static func workload(_ store: Store, clock: ManualClock, seed: UInt64, steps: Int = 120) async throws -> [Event] {
        var random = SeededGenerator(seed: seed)
        let remotes = [ReplicaID(high: 0xAA, low: seed), ReplicaID(high: 0xBB, low: seed)]
        var remoteSequence = [UInt64](repeating: 0, count: remotes.count)
        for _ in 0..<steps {
            clock.advance(by: Int64(random.next() % 5))
            let collection = random.next() % 4 == 0 ? "tasks" : "notes"
            let id = "i\(random.next() % 12)"
            let roll = random.next() % 10
            var fields: [String: Value] = [:]
            for name in ["title", "body", "rank"] where random.next() % 2 == 0 {
                fields[name] = CoreFixtures.randomValue(&random)
            }
            if roll < 7 {
                let change: Change
                switch roll {
                case 0: change = .delete(collection, id: id)
                case 1, 2, 3: change = .patch(collection, id: id, fields: fields.isEmpty ? ["title": "t"] : fields)
                default: change = .put(collection, id: id, fields: fields)
                }
                try await store.append([change])
            } else {
                let remote = Int(random.next() % 2)
                remoteSequence[remote] += 1
                let offset = Int64(random.next() % 4_000) - 2_000  // up to 2 s behind or ahead
                let stamp = HLCTimestamp(
                    physical: UInt64(Int64(clock.now) + offset), logical: UInt16(remoteSequence[remote]))
                let operation: EventOperation = roll == 9 ? .delete : .patch
                let event = CoreFixtures.remote(
                    remotes[remote], remoteSequence[remote], at: stamp, item: id, in: collection, operation,
                    fields: operation == .delete ? [:] : (fields.isEmpty ? ["body": "remote"] : fields))
                _ = try await store.ingest([event])
            }
        }
        return try store.read { reader in
            var events: [Event] = []
            try reader.forEachEvent {
                events.append($0); return true
            }
            return events
        }
    }

    static func fields(_ items: [Item]) -> [String: [String: Value]] {
        Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.fields) })
    }

    // MARK: Replay to a point

    @Test func replayToASeqEqualsTheMergeOfTheEventsUpToIt() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        try await withTemporaryStore(configuration: configuration) { store in
            let log = try await ReplayTests.workload(store, clock: clock, seed: 21)
            let head = UInt64(log.count)
            #expect(try store.head() == head)
            for point in [UInt64(1), 2, 17, 40, 63, 99, head - 1, head] {
                let prefix = log.filter { $0.seq <= point }
                let state = try store.replay(to: .seq(point))
                #expect(state.eventsApplied == point)
                #expect(state.point == .seq(point))
                for collection in ["notes", "tasks"] {
                    let expected = ProjectionFixtures.expectedItems(prefix)[collection] ?? [:]
                    #expect(
                        ReplayTests.fields(try state.items(in: collection)) == expected, "seq \(point), \(collection)")
                }
                let all = try state.items()
                #expect(all.count == (try state.items(in: "notes").count + state.items(in: "tasks").count))
                #expect(all.map(\.collection) == all.map(\.collection).sorted(), "collections in order")
                // Versions: the greatest stamp among the item's events so far.
                for item in all {
                    let stamps = prefix.filter { $0.collection == item.collection && $0.item == item.id }.map(\.hlc)
                    #expect(item.version == stamps.max())
                    #expect(try state.item(item.collection, item.id) == item)
                }
            }
            // At the head, replay equals the live projections.
            let live = try ProjectionFixtures.items(store, in: "notes") + ProjectionFixtures.items(store, in: "tasks")
            #expect(try store.replay(to: .seq(head)).items() == live)
            #expect(try store.replay(to: .seq(.max)).items() == live)
            let nothing = try store.replay(to: .seq(0))
            #expect(try nothing.items().isEmpty)
            #expect(nothing.eventsApplied == 0)
            #expect(try nothing.item("notes", "i1") == nil)
        }
    }

    @Test func replayToAClockStampTakesEveryEventStampedUpToIt() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        try await withTemporaryStore(configuration: configuration) { store in
            let log = try await ReplayTests.workload(store, clock: clock, seed: 22)
            let stamps = log.map(\.hlc).sorted()
            // Remote events arrive out of stamp order, so a stamp cut is not a seq cut.
            #expect(log.map(\.hlc) != stamps)
            for index in [0, 10, stamps.count / 3, stamps.count / 2, stamps.count - 1] {
                let cut = stamps[index]
                let included = log.filter { $0.hlc <= cut }
                let state = try store.replay(to: .hlc(cut))
                #expect(state.eventsApplied == UInt64(included.count))
                for collection in ["notes", "tasks"] {
                    #expect(
                        ReplayTests.fields(try state.items(in: collection))
                            == (ProjectionFixtures.expectedItems(included)[collection] ?? [:]),
                        "hlc \(cut)")
                }
            }
            #expect(try store.replay(to: .hlc(.zero)).items().isEmpty)
        }
    }

    @Test func replayReportsProgressAndLeavesTheStoreAlone() async throws {
        try await withTemporaryStore { store in
            try await store.append((0..<50).map { .put("notes", id: "n\($0)", fields: ["title": "x"]) })
            let reports = Mutex<[Store.Progress]>([])
            let dump = try ProjectionFixtures.projectionBytes(store)
            let state = try store.replay(to: .seq(30)) { progress in reports.withLock { $0.append(progress) } }
            #expect(try state.items(in: "notes").count == 30)
            let seen = reports.withLock { $0 }
            #expect(seen.last == Store.Progress(processed: 30, total: 30))
            #expect(try ProjectionFixtures.projectionBytes(store) == dump, "replay builds elsewhere")
            #expect(try store.head() == 50)
            #expect(ReplayPoint.seq(30).description == "seq 30")
        }
    }

    // MARK: Steps and field histories

    @Test func stepsTellWhatEachEventDidToEachField() async throws {
        let clock = ManualClock(start: CoreFixtures.epoch)
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        try await withTemporaryStore(configuration: configuration) { store in
            let other = ReplicaID(high: 0xCC, low: 1)
            clock.advance(by: 100)
            let e1 = try await store.put("notes", id: "n", fields: ["title": "A", "body": "x"])
            clock.advance(by: 100)
            let e2 = try await store.patch("notes", id: "n", fields: ["title": "B"])
            // Written elsewhere between e1 and e2, arriving later: it loses to e2.
            let e3 = CoreFixtures.remote(
                other, 1, at: HLCTimestamp(physical: e1.hlc.physical + 50, logical: 0), item: "n", .patch,
                fields: ["title": "old"])
            _ = try await store.ingest([e3])
            clock.advance(by: 100)
            let e4 = try await store.put("notes", id: "n", fields: ["title": "C"])
            clock.advance(by: 100)
            let e5 = try await store.delete("notes", id: "n")
            // Written elsewhere before the delete: the delete already cleared it.
            let e6 = CoreFixtures.remote(
                other, 2, at: HLCTimestamp(physical: e5.hlc.physical - 10, logical: 0), item: "n", .patch,
                fields: ["extra": 1])
            _ = try await store.ingest([e6])
            clock.advance(by: 100)
            let e7 = try await store.patch("notes", id: "n", fields: ["title": "D"])

            let steps = try store.replaySteps(collection: "notes", item: "n")
            #expect(steps.map(\.event.id) == [e1.id, e2.id, e3.id, e4.id, e5.id, e6.id, e7.id])
            func change(_ field: String, _ old: Value?, _ new: Value?, _ outcome: FieldChange.Outcome) -> FieldChange {
                FieldChange(field: field, old: old, new: new, outcome: outcome)
            }
            #expect(steps[0].changes == [change("body", nil, "x", .set), change("title", nil, "A", .set)])
            #expect(steps[0].itemAfter?.fields == ["title": "A", "body": "x"])
            #expect(steps[1].changes == [change("title", "A", "B", .set)])
            #expect(steps[2].changes == [change("title", "B", "B", .lost(to: e2.id))])
            #expect(steps[2].itemAfter?.fields == ["title": "B", "body": "x"])
            #expect(steps[3].changes == [change("body", "x", nil, .cleared), change("title", "B", "C", .set)])
            #expect(steps[4].changes == [change("title", "C", nil, .cleared)])
            #expect(steps[4].itemAfter == nil)
            #expect(steps[5].changes == [change("extra", nil, nil, .lost(to: e5.id))])
            #expect(steps[5].itemAfter == nil)
            #expect(steps[6].changes == [change("title", nil, "D", .set)])
            #expect(steps[6].itemAfter?.fields == ["title": "D"], "a write after the delete revives only its fields")
            #expect(steps[6].itemAfter == (try store.item("notes", "n")))

            let upToThree = try store.replaySteps(collection: "notes", item: "n", to: .seq(3))
            #expect(upToThree.map(\.event.id) == [e1.id, e2.id, e3.id])
            #expect(try store.replaySteps(collection: "notes", item: "absent").isEmpty)

            // Field histories: oldest stamp first, one winner, the greatest stamp.
            let titles = try store.history(collection: "notes", item: "n", field: "title")
            #expect(titles.map(\.event.id) == [e1.id, e3.id, e2.id, e4.id, e5.id, e7.id], "by stamp, not by arrival")
            #expect(titles.map(\.won) == [false, false, false, false, false, true])
            #expect(titles.map(\.value) == ["A", "old", "B", "C", nil, "D"])
            #expect(titles.allSatisfy { !$0.reason.isEmpty })
            // e3, stamped between e1 and e2 by a replica that had seen neither, is e1's next write
            // by stamp (a conflict) and lost to e2 (a conflict the merge recorded).
            #expect(
                titles.map(\.outcome) == [
                    .conflict(lostTo: e3.id), .conflict(lostTo: e2.id), .overwritten(by: e4.id), .cleared(by: e5.id),
                    .overwritten(by: e7.id), .won,
                ])
            let bodies = try store.history(collection: "notes", item: "n", field: "body")
            #expect(bodies.map(\.event.id) == [e1.id, e4.id, e5.id])
            #expect(bodies.map(\.won) == [false, false, true], "the delete is what the field holds: nothing")
            let all = try store.history(collection: "notes", item: "n")
            #expect(Set(all.map(\.field)) == ["body", "extra", "title"])
            #expect(all.filter(\.won).count == 3, "one winner per field")
        }
    }

    @Test func aReplicaNeverConflictsWithItsOwnWritesWhateverBaseItNames() async throws {
        try await withTemporaryStore { store in
            let first = try await store.put("notes", id: "n", fields: ["title": "A"])
            // Made from the item as it was before `first`: still the same replica, which saw it.
            let second = try await store.append([Change.patch("notes", id: "n", fields: ["title": "B"], base: .zero)])[
                0]
            #expect(second.base < first.hlc)
            let titles = try store.history(collection: "notes", item: "n", field: "title")
            #expect(titles.map(\.outcome) == [.overwritten(by: second.id), .won])
            #expect(try store.read { try $0.conflicts(collection: "notes") }.isEmpty)
        }
    }

    @Test func everyFieldHistoryHasOneWinnerWithTheGreatestStamp() async throws {
        for seed in UInt64(1)...30 {
            let events = CoreFixtures.randomHistory(seed: seed, origins: 3, events: 25, items: ["a", "b"])
            var configuration = Store.Configuration()
            configuration.physicalClock = { CoreFixtures.epoch + 10_000 }
            try await withTemporaryStore(configuration: configuration) { store in
                var random = SeededGenerator(seed: seed)
                _ = try await store.ingest(events.shuffled(using: &random))
                for item in ["a", "b"] {
                    let mine = events.filter { $0.item == item }
                    let expected = ProjectionFixtures.expected(mine) ?? [:]
                    let history = try store.history(collection: "notes", item: item)
                    for field in Set(history.map(\.field)) {
                        let entries = history.filter { $0.field == field }
                        #expect(entries.map(\.event.stamp) == entries.map(\.event.stamp).sorted(), "seed \(seed)")
                        let winners = entries.filter(\.won)
                        #expect(winners.count == 1, "seed \(seed) \(item).\(field)")
                        #expect(
                            winners.first?.event.stamp == entries.last?.event.stamp, "seed \(seed) \(item).\(field)")
                        #expect(winners.first?.value == expected[field], "seed \(seed) \(item).\(field)")
                        // The outcomes follow the merge's conflict records and its concurrency rule.
                        let conflicts = try store.read { try $0.conflicts(collection: "notes", item: item) }
                        for entry in entries {
                            #expect((entry.outcome == .won) == entry.won, "seed \(seed) \(item).\(field)")
                            let recorded = conflicts.first { $0.field == field && $0.loser.event == entry.event.id }
                            if let recorded {
                                #expect(entry.outcome == .conflict(lostTo: recorded.winner.event), "seed \(seed)")
                            }
                            if case .conflict(let winner) = entry.outcome {
                                #expect(winner.origin != entry.event.id.origin, "seed \(seed): a replica sees itself")
                            }
                        }
                    }
                }
            }
        }
    }
}
