import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// The change stream: catch-up from the log, then live commits, in seq order, with nothing
/// missed or repeated across the boundary, however slow the consumer.
struct ItemChangesTests {
    @Test func catchUpThenLiveChangesArriveInOrderWithNothingMissed() async throws {
        var configuration = Store.Configuration()
        configuration.durability = .relaxed  // many small commits; fsyncs would only slow CI down
        try await withTemporaryStore(configuration: configuration) { store in
            // More than one catch-up chunk already in the log.
            for batch in 0..<30 {
                try await store.append(
                    (0..<10).map { .put("notes", id: "n\((batch * 10 + $0) % 97)", fields: ["v": .int(Int64(batch))]) })
            }
            let total: UInt64 = 300 + 600
            let consumer = Task { () throws -> [ItemChange] in
                var seen: [ItemChange] = []
                for try await change in store.changes(after: 0) {
                    seen.append(change)
                    // A slow consumer: it falls behind the writer now and then.
                    if seen.count % 150 == 0 { try await Task.sleep(for: .milliseconds(20)) }
                    if change.seq == total { break }
                }
                return seen
            }
            // Live writes while the consumer is still catching up, and after.
            var random = SeededGenerator(seed: 8)
            var written: UInt64 = 300
            while written < total {
                let size = min(UInt64(1 + random.next() % 3), total - written)
                let changes: [Change] = (0..<size).map { offset in
                    let id = "n\((written + offset) % 97)"
                    return random.next() % 5 == 0
                        ? .delete("notes", id: id)
                        : .patch("notes", id: id, fields: ["v": .int(Int64(written + offset))])
                }
                try await store.append(changes)
                written += size
                if random.next() % 50 == 0 { try await Task.sleep(for: .milliseconds(5)) }
            }
            let seen = try await CoreFixtures.value(of: consumer, timeout: 30) ?? []
            #expect(seen.map(\.seq) == Array(1...total), "every seq once, in order")
            let log = try store.read { reader in
                var events: [Event] = []
                try reader.forEachEvent {
                    events.append($0); return true
                }
                return events
            }
            for (change, event) in zip(seen, log) {
                #expect(
                    change.collection == event.collection && change.id == event.item
                        && change.operation == event.operation)
                if event.operation == .delete {
                    // The state at delivery may be newer, but a delete delivered live shows no item.
                    if let item = change.item { #expect(item.version > event.hlc) }
                } else {
                    #expect(change.item != nil || log.contains { $0.item == event.item && $0.seq > event.seq })
                }
            }
            // The last change of each item shows its final state.
            var last: [String: ItemChange] = [:]
            for change in seen { last[change.id] = change }
            for (id, change) in last { #expect(change.item == (try store.item("notes", id)), "\(id)") }
        }
    }

    @Test func withoutAStartOnlyLiveChangesArrive() async throws {
        try await withTemporaryStore { store in
            try await store.append((0..<10).map { .put("notes", id: "old\($0)", fields: ["a": 1]) })
            var iterator = store.changes().makeAsyncIterator()
            try await store.put("notes", id: "new1", fields: ["a": 2])
            try await store.delete("notes", id: "old3")
            let first = try await iterator.next()
            let second = try await iterator.next()
            #expect(first?.seq == 11 && first?.id == "new1" && first?.operation == .put)
            #expect(first?.item?.fields == ["a": 2])
            #expect(second?.seq == 12 && second?.id == "old3" && second?.operation == .delete)
            #expect(second?.item == nil)
        }
    }

    @Test func aStartAtTheHeadWaitsForTheNextCommit() async throws {
        try await withTemporaryStore { store in
            try await store.append((0..<3).map { .put("notes", id: "n\($0)", fields: ["a": 1]) })
            let waiter = Task { () throws -> ItemChange? in
                var iterator = store.changes(after: 3).makeAsyncIterator()
                return try await iterator.next()
            }
            try await Task.sleep(for: .milliseconds(50))
            try await store.patch("notes", id: "n1", fields: ["a": 2])
            let change = try await CoreFixtures.value(of: waiter, timeout: 10) ?? nil
            #expect(change?.seq == 4)
            #expect(change?.item?["a"] == 2)
        }
    }

    @Test func concurrentConsumersSeeTheSameChanges() async throws {
        try await withTemporaryStore { store in
            try await store.append((0..<20).map { .put("notes", id: "n\($0)", fields: ["a": 1]) })
            let consumers = (0..<4).map { index in
                Task { () throws -> [UInt64] in
                    var seqs: [UInt64] = []
                    for try await change in store.changes(after: UInt64(index * 5)) {
                        seqs.append(change.seq)
                        if change.seq == 120 { break }
                    }
                    return seqs
                }
            }
            for round in 0..<100 {
                try await store.patch("notes", id: "n\(round % 20)", fields: ["a": .int(Int64(round))])
            }
            for (index, consumer) in consumers.enumerated() {
                let seqs = try await CoreFixtures.value(of: consumer, timeout: 20) ?? []
                #expect(seqs == Array(UInt64(index * 5 + 1)...120))
            }
        }
    }

    @Test func closingTheStoreEndsTheSequence() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.path)
        try await store.put("notes", id: "n1", fields: ["a": 1])
        let received = Mutex<[UInt64]>([])
        let consumer = Task { () throws -> [UInt64] in
            for try await change in store.changes(after: 0) { received.withLock { $0.append(change.seq) } }
            return received.withLock { $0 }  // reached only when the sequence ends
        }
        // Close once the consumer has caught up and waits for live changes.
        for _ in 0..<500 where received.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        store.close()
        let seqs = try await CoreFixtures.value(of: consumer, timeout: 10)
        #expect(seqs == [1])
        // A sequence made after closing ends at once.
        var iterator = store.changes(after: 0).makeAsyncIterator()
        #expect(try await iterator.next() == nil)
    }
}
