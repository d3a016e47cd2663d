import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// The log read for a replay: every event of the range once, in order, a chunk at a time across
/// batches; a chunk applied again gets the same events first; chunks bounded by count and bytes;
/// a bad event ends the range with its error after the events before it; a cancel ends it with an
/// error, never as if the log had ended. A pass of a replay reads only the events of its items,
/// and knows where the range ended when its last events were skipped. Each on a reading thread
/// and from one snapshot.
struct LogReadAheadTests {
    enum Mode: CaseIterable {
        case thread, snapshot
    }

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

    /// Runs `body` with a reader of `from...through` of `store`'s log, in `mode`.
    static func reading<T>(
        _ store: Store, _ mode: Mode, from: UInt64, through: UInt64, keys: ItemKeyRange = .all,
        _ body: (LogReadAhead) throws -> T
    ) throws -> T {
        switch mode {
        case .thread:
            let events = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: from, through: through, keys: keys)
            defer { events.cancel() }
            return try body(events)
        case .snapshot:
            return try store.read { reader in
                try body(
                    LogReadAhead(
                        snapshot: reader.tx, database: store.schema.events, from: from,
                        through: through, keys: keys))
            }
        }
    }

    /// The seqs and items of the chunk: up to `limit` events, or about `bytes` of them.
    static func chunk(_ events: LogReadAhead, limit: Int = 999, bytes: Int = .max) -> [(seq: UInt64, item: String)] {
        var chunk: [(seq: UInt64, item: String)] = []
        events.forEachInChunk(limit: limit, bytes: bytes) { chunk.append(($0.seq, $0.event.item)) }
        return chunk
    }

    /// The seqs of every chunk up to the end of the range (or its error).
    static func drain(_ events: LogReadAhead) -> [UInt64] {
        var seen: [UInt64] = []
        while let more = try? events.beginChunk(), more {
            seen += chunk(events).map(\.seq)
            events.commit()
        }
        return seen
    }

    @Test(arguments: Mode.allCases)
    func readsTheRangeInOrderAChunkAtATime(mode: Mode) async throws {
        try await withTemporaryStore { store async throws in
            // Three batches and a part: the range stops short of the log's end.
            let count = 2 * LogReadAhead.batchEvents + 700
            try await Self.filled(store, count: count + 50)
            let seen = try Self.reading(store, mode, from: 3, through: UInt64(count)) { events in
                var seen: [UInt64] = []
                while try events.beginChunk() {
                    let chunk = Self.chunk(events)
                    #expect(!chunk.isEmpty && chunk.count <= 999)
                    // A transaction that runs again gets the same events first.
                    let again = Self.chunk(events)
                    #expect(Array(again.prefix(chunk.count).map(\.seq)) == chunk.map(\.seq))
                    for (seq, item) in again { #expect(item == "i\(seq)") }
                    seen += again.map(\.seq)
                    events.commit()
                }
                let more = try events.beginChunk()
                #expect(!more)
                return seen
            }
            #expect(seen == Array(3...UInt64(count)))
        }
    }

    @Test(arguments: Mode.allCases)
    func aChunkStopsAtItsBytes(mode: Mode) async throws {
        try await withTemporaryStore { store async throws in
            try await Self.filled(store, count: 500)
            try Self.reading(store, mode, from: 1, through: 500) { events in
                let first = try events.beginChunk()
                #expect(first && Self.chunk(events, limit: 1_000, bytes: 1).map(\.seq) == [1])
                events.commit()
                let rest = try events.beginChunk()
                #expect(rest && Self.chunk(events, limit: 1_000).map(\.seq) == Array(2...500))
            }
        }
    }

    @Test(arguments: Mode.allCases)
    func anEmptyRangeEndsAtOnce(mode: Mode) async throws {
        try await withTemporaryStore { store async throws in
            try await Self.filled(store, count: 10)
            let past = try Self.reading(store, mode, from: 11, through: 20) { try $0.beginChunk() }
            let reversed = try Self.reading(store, mode, from: 5, through: 4) { try $0.beginChunk() }
            #expect(!past && !reversed)
        }
    }

    @Test(arguments: Mode.allCases)
    func aBadEventEndsTheRangeWithItsErrorAfterTheEventsBeforeIt(mode: Mode) async throws {
        try await withTemporaryStore { store async throws in
            let bad = UInt64(LogReadAhead.batchEvents + 17)
            try await Self.filled(store, count: Int(bad) + 30)
            try store.environment.write { tx in
                _ = try tx.put([0xFF, 0x01], forKey: Keys.seq(bad), in: store.schema.events)
            }
            try Self.reading(store, mode, from: 1, through: bad + 30) { events in
                #expect(Self.drain(events) == Array(1..<bad))
                #expect(throws: EventStoreError.self) { try events.beginChunk() }
            }
        }
    }

    @Test(arguments: Mode.allCases)
    func aPassReadsOnlyTheEventsOfItsItems(mode: Mode) async throws {
        try await withTemporaryStore { store async throws in
            try await Self.filled(store, count: 3_000)
            // Item keys sort as bytes: i2, i20…i29, i200…i299, i2000…i2999, then i3.
            let keys = ItemKeyRange(lower: Keys.item("notes", "i2"), upper: Keys.item("notes", "i3"))
            let (seen, lastRead) = try Self.reading(store, mode, from: 1, through: 3_000, keys: keys) {
                (Self.drain($0), $0.lastRead)
            }
            let expected = (1...UInt64(3_000)).filter { "i\($0)".hasPrefix("i2") }
            #expect(seen == expected && seen.last == 2_999)
            #expect(lastRead == 3_000, "the event of i3000 was read and skipped")
        }
    }

    @Test(arguments: Mode.allCases)
    func aPassWithoutEventsEndsAfterReadingTheWholeRange(mode: Mode) async throws {
        try await withTemporaryStore { store async throws in
            // More events than one batch reads in its transaction, none of them in the range.
            let count = LogReadAhead.batchScan + 100
            try await Self.filled(store, count: count)
            let keys = ItemKeyRange(lower: Keys.item("notes", "z"), upper: nil)
            let (more, lastRead) = try Self.reading(store, mode, from: 1, through: UInt64(count), keys: keys) {
                (try $0.beginChunk(), $0.lastRead)
            }
            #expect(!more)
            #expect(lastRead == UInt64(count))
        }
    }

    @Test func cancellingEndsTheRangeWithAnErrorAfterWhatWasReadAlready() async throws {
        try await withTemporaryStore { store async throws in
            let count = UInt64(8 * LogReadAhead.batchEvents)
            try await Self.filled(store, count: Int(count))
            let events = LogReadAhead(
                environment: store.environment, database: store.schema.events, from: 1, through: count)
            let first = try events.beginChunk()
            #expect(first && Self.chunk(events, limit: 1).map(\.seq) == [1])
            events.commit()
            events.cancel()
            // The batches read before the cancel come out, in order; then the range ends with an
            // error, not as if the log ended there.
            let rest = Self.drain(events)
            #expect(rest == Array(2..<2 + UInt64(rest.count)))
            #expect(rest.count < Int(count) - 1)
            #expect(throws: CancellationError.self) { try events.beginChunk() }
        }
    }
}
