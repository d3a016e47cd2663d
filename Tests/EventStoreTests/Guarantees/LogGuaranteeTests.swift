import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// The foundation's promises: encoding, durability across reopen, concurrency, growth,
/// idempotency, atomicity, clocks and bad input.
struct LogGuaranteeTests {
    static let allValues: [String: Value] = [
        "null": .null, "false": false, "true": true, "int": .int(-42), "max": .int(.max), "min": .int(.min),
        "double": 3.25, "negZero": .double(-0.0), "string": "héllo 동기화 🙂", "empty": "",
        "array": [1, "two", [3.5, nil], ["k": true]], "object": ["a": 1, "b": ["c": "d"]],
    ]

    // MARK: Encoding

    @Test(arguments: EventOperation.allCases)
    func everyValueAndOperationRoundTripsThroughTheEncoding(operation: EventOperation) throws {
        let event = Event(
            seq: 7, id: EventID(origin: ReplicaID(high: 1, low: 2), sequence: 99),
            hlc: HLCTimestamp(physical: 1_800_000_000_000, logical: 3),
            base: HLCTimestamp(physical: 1_700_000_000_000, logical: 0), collection: "notes", item: "n/1",
            operation: operation, fields: operation == .delete ? [:] : LogGuaranteeTests.allValues, schema: 4)
        let decoded = try Event(decoding: event.encoded(), seq: 7)
        #expect(decoded == event)
        #expect(decoded.encoded() == event.encoded())
    }

    @Test func truncatedOrForeignBytesAreAnErrorNotACrash() async throws {
        let event = Event(
            id: EventID(origin: .random(), sequence: 1), hlc: HLCTimestamp(rawValue: 1 << 20), collection: "c",
            item: "i",
            operation: .put, fields: LogGuaranteeTests.allValues)
        let bytes = event.encoded()
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: EventStoreError.self) { try Event(decoding: Array(bytes.prefix(length)), seq: 1) }
        }
        var newer = bytes
        newer[0] = 9
        await expectStoreError(.unsupportedFormat) { _ = try Event(decoding: newer, seq: 1) }
    }

    @Test func valuesRoundTripThroughTheStoreAndReopen() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        var store = try Store.open(at: directory.path, configuration: configuration)
        let replica = store.replicaID
        var written: [Event] = []
        for (index, operation) in EventOperation.allCases.enumerated() {
            let change = Change(
                collection: "notes", item: "n\(index)", operation: operation,
                fields: operation == .delete ? [:] : LogGuaranteeTests.allValues)
            written += try await store.append([change])
        }
        let lastStamp = written.last!.hlc
        store.close()

        clock.advance(by: -3_600_000)  // the clock goes back an hour while the store is closed
        store = try Store.open(at: directory.path, configuration: configuration)
        defer { store.close() }
        #expect(store.replicaID == replica)
        let reread = try store.read { reader in try (1...UInt64(written.count)).map { try reader.event(at: $0)! } }
        #expect(reread == written)
        #expect(try store.item("notes", "n0")?.fields == LogGuaranteeTests.allValues)
        let next = try await store.put("notes", id: "after", fields: ["x": 1])
        #expect(next.hlc > lastStamp, "the HLC high-water survives reopen")
        #expect(next.id.sequence == UInt64(written.count + 1))
    }

    // MARK: Concurrency

    @Test func sixtyFourTasksAppendDenseOrderedEvents() async throws {
        var configuration = Store.Configuration()
        configuration.durability = .relaxed  // group commit is exercised either way; fsyncs would only slow CI
        try await withTemporaryStore(configuration: configuration) { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<64 {
                    group.addTask {
                        for index in 0..<500 {
                            try await store.append([
                                .put("t\(task)", id: "e\(index)", fields: ["n": .int(Int64(index))])
                            ])
                        }
                    }
                }
                try await group.waitForAll()
            }
            try store.read { reader in
                #expect(try reader.head() == 32_000)
                var ids = Set<EventID>()
                var lastIndex: [String: Int64] = [:]
                try reader.forEachEvent { event in
                    #expect(ids.insert(event.id).inserted)
                    let index = event.fields["n"]!.intValue!
                    #expect(index == (lastIndex[event.collection] ?? -1) + 1, "each task's events keep their order")
                    lastIndex[event.collection] = index
                    return true
                }
                #expect(ids.count == 32_000)
                var expected: UInt64 = 1
                try reader.forEachEvent { event in
                    #expect(event.seq == expected)
                    expected += 1
                    return true
                }
            }
        }
    }

    @Test func aTinyMapGrowsToTwoHundredMebibytes() async throws {
        var configuration = Store.Configuration()
        configuration.mapSize = 1 << 20
        configuration.durability = .bulk
        configuration.search.defaultFields = []
        try await withTemporaryStore(configuration: configuration) { store in
            let blob = Value.string(String(repeating: "x", count: 10_000))
            for batch in 0..<210 {
                try await store.append((0..<100).map { .put("blobs", id: "b\(batch)-\($0)", fields: ["data": blob]) })
            }
            try store.sync()
            #expect(try store.head() == 21_000)
            #expect(try store.count(in: "blobs") == 21_000)
            #expect(try store.statistics().usedBytes > 200 << 20)
        }
    }

    // MARK: Idempotency and atomicity

    @Test func duplicateEventsAreReportedNotReappended() async throws {
        try await withTemporaryStore { store in
            let origin = ReplicaID.random()
            let now = systemMilliseconds()
            let events = (1...5).map {
                Event(
                    id: EventID(origin: origin, sequence: UInt64($0)),
                    hlc: HLCTimestamp(physical: now, logical: UInt16($0)),
                    collection: "notes", item: "n\($0)", operation: .put, fields: ["title": "t\($0)"])
            }
            let first = try await store.ingest(events)
            #expect(first.appended.count == 5 && first.duplicates.isEmpty)
            let second = try await store.ingest(events + [events[0]])
            #expect(second.appended.isEmpty)
            #expect(second.duplicates.count == 6)
            #expect(try store.head() == 5)
        }
    }

    @Test func oneInvalidChangeOrEventWritesNothing() async throws {
        try await withTemporaryStore { store in
            try await store.put("notes", id: "keep", fields: ["title": "x"])
            await #expect(throws: EventStoreError.self) {
                try await store.append([
                    .put("notes", id: "a", fields: ["title": "ok"]), .patch("notes", id: "b", fields: [:]),
                ])
            }
            let now = systemMilliseconds()
            let good = Event(
                id: EventID(origin: .random(), sequence: 1), hlc: HLCTimestamp(physical: now, logical: 0),
                collection: "notes",
                item: "r1", operation: .put, fields: ["title": "remote"])
            var bad = good
            bad.id.sequence = 2
            bad.collection = "bad name!"
            await #expect(throws: EventStoreError.self) { try await store.ingest([good, bad]) }
            #expect(try store.head() == 1)
            #expect(try store.item("notes", "a") == nil)
            #expect(try store.item("notes", "r1") == nil)
        }
    }

    // MARK: Clocks

    @Test func theClockNeverGoesBackAndRatchetsPastReceivedStamps() async throws {
        let clock = ManualClock()
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        try await withTemporaryStore(configuration: configuration) { store in
            var stamps: [HLCTimestamp] = []
            for step in 0..<20 {
                clock.advance(by: step % 3 == 0 ? -5_000 : 1)
                stamps.append(try await store.put("notes", id: "n\(step)", fields: ["i": .int(Int64(step))]).hlc)
            }
            #expect(stamps == stamps.sorted() && Set(stamps).count == stamps.count)

            let ahead = HLCTimestamp(physical: clock.now + 30_000, logical: 0)
            let remote = Event(
                id: EventID(origin: .random(), sequence: 1), hlc: ahead, collection: "notes", item: "remote",
                operation: .put, fields: ["title": "from the future, within the bound"])
            _ = try await store.ingest([remote])
            let local = try await store.put("notes", id: "after", fields: ["x": 1])
            #expect(local.hlc > ahead)

            let far = Event(
                id: EventID(origin: .random(), sequence: 1),
                hlc: HLCTimestamp(physical: clock.now + 120_000, logical: 0),
                collection: "notes", item: "poison", operation: .put, fields: ["x": 1])
            let head = try store.head()
            await expectStoreError(.clockSkew) { _ = try await store.ingest([far]) }
            #expect(try store.head() == head)
        }
    }
}
