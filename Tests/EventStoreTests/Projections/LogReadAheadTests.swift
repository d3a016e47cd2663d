import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// The log read ahead of a rebuild: every event of the range once per attempt, in order, across
/// batches and chunks; a chunk that runs again gets its events again; a bad event ends the
/// sequence with its error after the events before it.
struct LogReadAheadTests {
    /// A store whose log holds `count` puts, `i<seq>` each.
    static func filled(_ store: Store, count: Int) async throws {
        var start = 0
        while start < count {
            let end = min(start + 1_000, count)
            try await store.append(
                (start..<end).map { .put("notes", id: "i\($0 + 1)", fields: ["n": .int(Int64($0 + 1))]) })
            start = end
        }
    }

    /// Takes up to `limit` events: their seqs and items.
    static func take(_ events: LogReadAhead, limit: Int) throws -> [(seq: UInt64, item: String)] {
        var taken: [(seq: UInt64, item: String)] = []
        while taken.count < limit, let next = try events.next({ ($0.seq, $0.event.item) }) { taken.append(next) }
        return taken
    }

    @Test func readsTheRangeInOrderAcrossBatchesAndChunks() async throws {
        try await withTemporaryStore { store async throws in
            // Three batches and a part: the range stops short of the log's end.
            let count = 2 * LogReadAhead.batchEvents + 700
            try await Self.filled(store, count: count + 50)
            let events = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: 3, through: UInt64(count))
            var seen: [UInt64] = []
            // Chunks of 999 events, each taken twice (the first attempt "aborted") and committed.
            while true {
                let first = try Self.take(events, limit: 999)
                events.rewind()
                let again = try Self.take(events, limit: 999)
                #expect(again.map(\.seq) == first.map(\.seq))
                events.commit()
                for (seq, item) in again { #expect(item == "i\(seq)") }
                seen += again.map(\.seq)
                if again.count < 999 { break }
            }
            #expect(seen == Array(3...UInt64(count)))
            #expect(try events.next({ $0.seq }) == nil)
        }
    }

    @Test func anEmptyRangeEndsAtOnce() async throws {
        try await withTemporaryStore { store async throws in
            try await Self.filled(store, count: 10)
            let past = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: 11, through: 20)
            #expect(try past.next({ $0.seq }) == nil)
            let reversed = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: 5, through: 4)
            #expect(try reversed.next({ $0.seq }) == nil)
        }
    }

    @Test func aBadEventEndsTheSequenceWithItsErrorAfterTheEventsBeforeIt() async throws {
        try await withTemporaryStore { store async throws in
            let bad = UInt64(LogReadAhead.batchEvents + 17)
            try await Self.filled(store, count: Int(bad) + 30)
            try store.environment.write { tx in
                _ = try tx.put([0xFF, 0x01], forKey: Keys.seq(bad), in: store.schema.events)
            }
            let events = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: 1, through: bad + 30)
            #expect(try Self.take(events, limit: 100).count == 100)
            events.commit()
            let before = try Self.take(events, limit: Int(bad) - 101)
            #expect(before.last?.seq == bad - 1)
            #expect(throws: EventStoreError.self) { try events.next({ $0.seq }) }
            // A chunk that runs again meets the same events, then the same error.
            events.rewind()
            #expect(try Self.take(events, limit: Int(bad) - 101).map(\.seq) == before.map(\.seq))
            #expect(throws: EventStoreError.self) { try events.next({ $0.seq }) }
        }
    }

    @Test func cancellingEndsTheSequenceAfterWhatWasReadAlready() async throws {
        try await withTemporaryStore { store async throws in
            let count = UInt64(8 * LogReadAhead.batchEvents)
            try await Self.filled(store, count: Int(count))
            let events = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: 1, through: count)
            #expect(try events.next({ $0.seq }) == 1)
            events.cancel()
            // The batches read before the cancel come out, in order; the later ones are empty.
            var rest: [UInt64] = []
            while let seq = try events.next({ $0.seq }) { rest.append(seq) }
            #expect(rest == Array(2..<2 + UInt64(rest.count)))
            #expect(rest.count < Int(count) - 1)
        }
    }
}
