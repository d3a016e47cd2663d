import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// The write path: what is appended is what is read back, before and after reopening; group
/// commit under concurrency; map growth; idempotent ingest; atomic batches.
struct WritePathTests {
    // MARK: Round trips

    @Test func everyValueAndOperationRoundTripsThroughTheLog() async throws {
        var configuration = Store.Configuration()
        configuration.schemas = [CollectionSchema("notes", version: 3)]
        try await withTemporaryStore(configuration: configuration) { store in
            var appended: [Event] = []
            for operation in EventOperation.allCases {
                let fields = operation == .delete ? [:] : CoreFixtures.allValues
                appended += try await store.append([
                    Change(collection: "notes", item: "n-\(operation)", operation: operation, fields: fields, schema: 3)
                ])
            }
            // Remote events keep their identity, stamps and schema.
            let origin = ReplicaID(high: 7, low: 7)
            let now = systemMilliseconds()
            let remote = EventOperation.allCases.enumerated().map { index, operation in
                Event(
                    id: EventID(origin: origin, sequence: UInt64(index + 1)),
                    hlc: HLCTimestamp(physical: now, logical: UInt16(index)),
                    base: HLCTimestamp(physical: now - 10, logical: 0), collection: "remote", item: "r\(index)",
                    operation: operation, fields: operation == .delete ? [:] : CoreFixtures.allValues,
                    schema: UInt16(index))
            }
            let ingested = try await store.ingest(remote)
            #expect(ingested.appended.map(\.seq) == [4, 5, 6])
            #expect(ingested.appended.map(\.id) == remote.map(\.id))

            try store.read { reader in
                #expect(try reader.head() == 6)
                for event in appended + ingested.appended {
                    #expect(try reader.event(at: event.seq) == event)
                    #expect(try reader.event(id: event.id) == event)
                    #expect(try reader.seq(of: event.id) == event.seq)
                }
                for (stored, sent) in zip(ingested.appended, remote) {
                    var expected = sent
                    expected.seq = stored.seq
                    #expect(try reader.event(at: stored.seq) == expected)
                }
                #expect(try reader.event(at: 7) == nil)
                #expect(try reader.event(at: 0) == nil)
                #expect(try reader.item("notes", "n-put")?.fields == CoreFixtures.allValues)
                #expect(try reader.item("notes", "n-patch")?.fields == CoreFixtures.allValues)
                #expect(try reader.item("notes", "n-delete") == nil)
                #expect(try reader.item("remote", "r0")?.fields == CoreFixtures.allValues)
                var cursor = reader.events(from: 2, through: 4)
                var seqs: [UInt64] = []
                while let event = try cursor.next() { seqs.append(event.seq) }
                #expect(seqs == [2, 3, 4])
            }
            // Local events: this replica's ids, dense origin sequences, increasing stamps.
            #expect(appended.map(\.id.origin) == [store.replicaID, store.replicaID, store.replicaID])
            #expect(appended.map(\.id.sequence) == [1, 2, 3])
            #expect(appended.map(\.seq) == [1, 2, 3])
            #expect(zip(appended, appended.dropFirst()).allSatisfy { $0.hlc < $1.hlc })
            #expect(appended.map(\.schema) == [3, 3, 3])
        }
    }

    @Test func reopeningKeepsEventsItemsIdentityAndTheClock() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock(start: CoreFixtures.epoch)
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        weak var releasedStore: Store?
        weak var releasedEnvironment: Environment?
        let (replica, written, remoteStamp, items, hits) = try await {
            () async throws -> (ReplicaID, [Event], HLCTimestamp, [Item], [String]) in
            let store = try Store.open(at: directory.path, configuration: configuration)
            releasedStore = store
            releasedEnvironment = store.environment
            var written: [Event] = []
            for index in 0..<20 {
                clock.advance(by: 1)
                written += try await store.append([
                    .put(
                        "notes", id: "n\(index)",
                        fields: ["title": "note \(index) offline", "all": .object(CoreFixtures.allValues)]),
                    .patch("notes", id: "n\(index / 2)", fields: ["rank": .int(Int64(index))]),
                ])
            }
            try await store.delete("notes", id: "n3")
            // A remote event stamped 30 s ahead ratchets the clock; the high-water must persist.
            let remoteStamp = HLCTimestamp(physical: clock.now + 30_000, logical: 4)
            _ = try await store.ingest([
                CoreFixtures.remote(
                    ReplicaID(high: 9, low: 9), 1, at: remoteStamp, item: "r1", fields: ["title": "remote"])
            ])
            let items = try ProjectionFixtures.items(store, in: "notes")
            let hits = try CoreFixtures.results(store, SearchQuery("offline", limit: 50))
            store.close()
            return (
                store.replicaID, try store.read { reader in try (1...reader.head()).map { try reader.event(at: $0)! } },
                remoteStamp, items, hits
            )
        }()
        #expect(
            releasedStore == nil && releasedEnvironment == nil, "the storage was closed, so the reopen reads the disk")

        clock.set(CoreFixtures.epoch - 3_600_000)  // the clock went back an hour meanwhile
        let store = try Store.open(at: directory.path, configuration: configuration)
        defer { store.close() }
        #expect(store.replicaID == replica)
        let reread = try store.read { reader in try (1...reader.head()).map { try reader.event(at: $0)! } }
        #expect(reread == written)
        #expect(try ProjectionFixtures.items(store, in: "notes") == items)
        #expect(try CoreFixtures.results(store, SearchQuery("offline", limit: 50)) == hits)
        #expect(try store.count(in: "notes") == 20, "20 local items, one deleted, one remote")

        let next = try await store.put("notes", id: "after", fields: ["title": "after reopen"])
        #expect(next.hlc > remoteStamp, "stamped after every stamp seen before closing")
        let newest = written.map { $0.hlc }.max() ?? .zero
        #expect(next.hlc > newest)
        #expect(next.id.sequence == 42, "the origin sequence continues")
        #expect(next.seq == UInt64(written.count + 1))
        #expect(try store.verify().isConsistent)
    }

    // MARK: Concurrency

    @Test func sixtyFourTasksAppendThirtyTwoThousandDenseOrderedEvents() async throws {
        var configuration = Store.Configuration()
        // Group commit is exercised the same way under every durability; fsyncs would only make CI slow.
        configuration.durability = .relaxed
        try await withTemporaryStore(configuration: configuration) { store in
            let returned = try await withThrowingTaskGroup(of: (Int, [Event]).self) { group in
                for task in 0..<64 {
                    group.addTask {
                        var events: [Event] = []
                        var index = 0
                        while index < 500 {
                            // Batches of 1…4 changes: single appends and small atomic batches.
                            let size = min(1 + (task + index) % 4, 500 - index)
                            let changes = (index..<index + size).map { n in
                                Change.put(
                                    "t\(task)", id: "e\(n)", fields: ["n": .int(Int64(n)), "task": .int(Int64(task))])
                            }
                            events += try await store.append(changes)
                            index += size
                        }
                        return (task, events)
                    }
                }
                var all: [Int: [Event]] = [:]
                for try await (task, events) in group { all[task] = events }
                return all
            }
            #expect(returned.count == 64)
            for (task, events) in returned {
                #expect(events.count == 500)
                #expect(events.map { $0.fields["n"]!.intValue! } == (0..<500).map(Int64.init), "task \(task)")
                #expect(
                    zip(events, events.dropFirst()).allSatisfy { $0.seq < $1.seq }, "task \(task): seqs in call order")
            }
            try store.read { reader in
                #expect(try reader.head() == 32_000)
                var expectedSeq: UInt64 = 1
                var ids = Set<EventID>()
                var lastStamp = HLCTimestamp.zero
                var lastIndex: [Int64: Int64] = [:]
                try reader.forEachEvent { event in
                    #expect(event.seq == expectedSeq)
                    expectedSeq += 1
                    #expect(ids.insert(event.id).inserted, "duplicate id \(event.id)")
                    #expect(event.id.sequence == event.seq, "local origin sequences follow the log")
                    #expect(event.hlc > lastStamp, "stamps increase along the log")
                    lastStamp = event.hlc
                    let task = event.fields["task"]!.intValue!
                    let index = event.fields["n"]!.intValue!
                    #expect(index == (lastIndex[task] ?? -1) + 1, "task \(task) out of order")
                    lastIndex[task] = index
                    return true
                }
                #expect(expectedSeq == 32_001)
                #expect(ids.count == 32_000)
            }
            // Every returned event is the stored one.
            let sample = returned.values.flatMap { $0 }.filter { $0.seq % 97 == 0 }
            try store.read { reader throws in
                for event in sample { #expect(try reader.event(at: event.seq) == event) }
            }
            for task in [0, 31, 63] { #expect(try store.count(in: "t\(task)") == 500) }
        }
    }

    @Test func aFailingWriteIsRolledBackAloneInsideAGroupCommit() async throws {
        struct Refused: Error {}
        try await withTemporaryStore { store in
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for request in 0..<48 {
                    group.addTask {
                        do {
                            try await store.write { writer in
                                try writer.append(.put("notes", id: "r\(request)-a", fields: ["title": "first"]))
                                try writer.append(.put("notes", id: "r\(request)-b", fields: ["title": "second"]))
                                try writer.setMetadata([UInt8(request)], forKey: "app.r\(request)")
                                if request % 3 == 0 { throw Refused() }
                            }
                            return (request, true)
                        } catch {
                            return (request, false)
                        }
                    }
                }
                var outcomes: [Int: Bool] = [:]
                for await (request, ok) in group { outcomes[request] = ok }
                return outcomes
            }
            #expect(outcomes.filter(\.value).count == 32)
            #expect(outcomes.filter { !$0.value }.keys.allSatisfy { $0 % 3 == 0 })
            try store.read { reader in
                #expect(try reader.head() == 64)
                var expected: UInt64 = 1
                try reader.forEachEvent { event in
                    #expect(event.seq == expected)
                    #expect(event.id.sequence == expected, "a rolled-back request leaves no gap in origin sequences")
                    expected += 1
                    return true
                }
                for request in 0..<48 {
                    let kept = request % 3 != 0
                    #expect((try reader.item("notes", "r\(request)-a") != nil) == kept)
                    #expect((try reader.item("notes", "r\(request)-b") != nil) == kept)
                    #expect((try reader.metadata(forKey: "app.r\(request)") != nil) == kept)
                }
                #expect(try reader.count(in: "notes") == 64)
            }
            #expect(try store.verify().isConsistent)
        }
    }

    // MARK: Growth

    @Test func aOneMebibyteMapGrowsPastTwoHundredMebibytes() async throws {
        var configuration = Store.Configuration()
        configuration.mapSize = 1 << 20
        // No flush per commit: this test is about map growth, not the disk.
        configuration.durability = .bulk
        // Indexing 200 MiB of text would only slow the test down.
        configuration.search.defaultFields = []
        try await withTemporaryStore(configuration: configuration) { store in
            var random = SeededGenerator(seed: 200)
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
            for batch in 0..<210 {
                // ~10 KiB per event, different in every batch.
                let text = String(decoding: (0..<10_240).map { _ in alphabet[Int(random.next() % 36)] }, as: UTF8.self)
                let changes = (0..<100).map {
                    Change.put("blobs", id: "b\(batch)-\($0)", fields: ["data": .string(text), "n": .int(Int64($0))])
                }
                let events = try await store.append(changes)
                #expect(events.last?.seq == UInt64((batch + 1) * 100))
            }
            // The flush of 200 MiB and the verify below hold their thread for long: not one of the pool's.
            try await offPool { try store.sync() }
            let statistics = try store.statistics()
            #expect(statistics.events == 21_000)
            #expect(statistics.mapSize > 200 << 20)
            let logBytes = statistics.databases.first { $0.name == "events" }?.bytes ?? 0
            #expect(logBytes > 200 << 20, "the log alone holds over 200 MiB")
            #expect(try store.count(in: "blobs") == 21_000)
            #expect(try store.item("blobs", "b209-99")?["n"] == 99)
            let report = try await offPool { try store.verify() }
            #expect(report.isConsistent, "\(report.problems.prefix(5))")
            #expect(report.eventsChecked == 21_000)
        }
    }

    @Test func readersSeeConsistentSnapshotsWhileTheMapGrows() async throws {
        var configuration = Store.Configuration()
        configuration.mapSize = 1 << 20
        configuration.durability = .bulk  // growth, not the disk, is under test
        try await withTemporaryStore(configuration: configuration) { store in
            let blob = Value.string(String(repeating: "z", count: 8_000))
            let writer = Task {
                for batch in 0..<60 {
                    try await store.append(
                        (0..<50).map { .put("blobs", id: "b\(batch)-\($0)", fields: ["title": "blob", "data": blob]) })
                }
            }
            let readers = (0..<2).map { _ in
                Task { () throws -> Int in
                    var reads = 0
                    var lastHead: UInt64 = 0
                    while lastHead < 3_000 {
                        // One view: the log, the item count and the search index agree.
                        let (head, count, hits) = try store.read { reader in
                            (
                                try reader.head(), try reader.count(in: "blobs"),
                                try reader.search(SearchQuery("blob", collection: "blobs", limit: 10_000)).count
                            )
                        }
                        #expect(head >= lastHead)
                        #expect(
                            UInt64(count) == head && UInt64(hits) == head, "head \(head), count \(count), hits \(hits)")
                        lastHead = head
                        reads += 1
                        await Task.yield()
                    }
                    return reads
                }
            }
            try await writer.value
            for reader in readers {
                let reads = try await CoreFixtures.value(of: reader, timeout: 60) ?? 0
                #expect(reads > 0)
            }
            #expect(try store.statistics().mapSize > 20 << 20)
        }
    }

    @Test func ownEventsComingBackFromElsewhereAdvanceTheOriginSequence() async throws {
        try await withTemporaryStore { store in
            try await store.put("notes", id: "n1", fields: ["title": "first"])
            // This replica's event 100, as a restored backup or the server might hand it back.
            let own = CoreFixtures.remote(
                store.replicaID, 100, at: HLCTimestamp(physical: systemMilliseconds(), logical: 0), item: "n2",
                fields: ["title": "from before the restore"])
            var withForeignSeq = own
            withForeignSeq.seq = 999  // a seq from another log means nothing here
            let result = try await store.ingest([withForeignSeq])
            #expect(result.appended.map(\.seq) == [2])
            #expect(try store.read { try $0.event(at: 2)?.seq } == 2)
            let next = try await store.put("notes", id: "n3", fields: ["title": "after"])
            #expect(next.id.sequence == 101, "no id is ever reused")
            #expect(next.hlc > own.hlc)
        }
    }

    @Test func concurrentOpensOfOnePathShareOneStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let stores = try await withThrowingTaskGroup(of: Store.self) { group in
            for _ in 0..<8 { group.addTask { try Store.open(at: directory.path) } }
            var stores: [Store] = []
            for try await store in group { stores.append(store) }
            return stores
        }
        #expect(stores.allSatisfy { $0 === stores[0] })
        #expect(Set(stores.map(\.replicaID)).count == 1)
        try await stores[3].put("notes", id: "n1", fields: ["a": 1])
        #expect(try stores[5].item("notes", "n1")?["a"] == 1)
        stores[0].close()
        let reopened = try Store.open(at: directory.path)
        defer { reopened.close() }
        #expect(reopened !== stores[0], "a closed store is not handed out again")
        #expect(reopened.replicaID == stores[0].replicaID)
    }

    // MARK: Idempotency and atomicity

    @Test func duplicateEventIdsAreReportedAndNotReappended() async throws {
        try await withTemporaryStore { store in
            let origin = ReplicaID(high: 1, low: 1)
            let now = systemMilliseconds()
            let events = (1...6).map { (index: Int) -> Event in
                let stamp = HLCTimestamp(physical: now, logical: UInt16(index))
                let operation: EventOperation = index % 2 == 0 ? .patch : .put
                return CoreFixtures.remote(
                    origin, UInt64(index), at: stamp, item: "n\(index % 3)", operation,
                    fields: ["title": .string("v\(index)")])
            }
            let first = try await store.ingest(events)
            #expect(first.appended.map(\.seq) == Array(1...6))
            #expect(first.duplicates.isEmpty)
            let items = try ProjectionFixtures.items(store, in: "notes")
            let dump = try ProjectionFixtures.projectionBytes(store)

            let again = try await store.ingest(events.reversed())
            #expect(again.appended.isEmpty)
            #expect(Set(again.duplicates) == Set(events.map(\.id)) && again.duplicates.count == 6)
            #expect(try store.head() == 6)
            #expect(try ProjectionFixtures.items(store, in: "notes") == items)
            #expect(try ProjectionFixtures.projectionBytes(store) == dump, "projections untouched, byte for byte")

            // A mixed batch appends only the new events; a repeat inside one batch counts once.
            let fresh = CoreFixtures.remote(
                origin, 7, at: HLCTimestamp(physical: now, logical: 7), item: "n9", fields: ["title": "new"])
            let mixed = try await store.ingest([events[0], fresh, events[5], fresh])
            #expect(mixed.appended.map(\.id) == [fresh.id])
            #expect(mixed.appended.map(\.seq) == [7])
            #expect(mixed.duplicates == [events[0].id, events[5].id, fresh.id])
            // A store's own events come back as duplicates too (an echo from the server).
            let own = try await store.put("notes", id: "mine", fields: ["title": "local"])
            let echo = try await store.ingest([own])
            #expect(echo.duplicates == [own.id] && echo.appended.isEmpty)
            #expect(try store.head() == 8)
            let outcome = try await store.write { writer in try writer.ingest(events[2]) }
            #expect(outcome == .duplicate(seq: 3))
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func concurrentIngestsOfTheSameEventsAppendEachOnce() async throws {
        try await withTemporaryStore { store in
            let origin = ReplicaID(high: 4, low: 4)
            let now = systemMilliseconds()
            let events = (1...20).map { index in
                CoreFixtures.remote(
                    origin, UInt64(index), at: HLCTimestamp(physical: now, logical: UInt16(index)),
                    item: "n\(index % 7)", fields: ["v": .int(Int64(index))])
            }
            let results = try await withThrowingTaskGroup(of: Store.IngestResult.self) { group in
                for task in 0..<10 {
                    group.addTask {
                        var random = SeededGenerator(seed: UInt64(task))
                        return try await store.ingest(events.shuffled(using: &random))
                    }
                }
                var results: [Store.IngestResult] = []
                for try await result in group { results.append(result) }
                return results
            }
            let appended = results.flatMap(\.appended)
            #expect(appended.count == 20)
            #expect(Set(appended.map(\.id)) == Set(events.map(\.id)))
            #expect(results.map(\.duplicates.count).reduce(0, +) == 180)
            #expect(try store.head() == 20)
            #expect(
                try CoreFixtures.fieldsByID(store, in: "notes")
                    == (ProjectionFixtures.expectedItems(events)["notes"] ?? [:]))
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func closingWhileWritesArePendingLosesNoAcknowledgedWrite() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.path)
        let outcomes = await withTaskGroup(of: Event?.self) { group in
            for index in 0..<200 {
                group.addTask { try? await store.put("notes", id: "n\(index)", fields: ["i": .int(Int64(index))]) }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(2))
                store.close()
                return nil
            }
            var events: [Event] = []
            for await event in group { if let event { events.append(event) } }
            return events
        }
        #expect(store.isClosed)
        let reopened = try Store.open(at: directory.path)
        defer { reopened.close() }
        #expect(try reopened.head() == UInt64(outcomes.count), "exactly the acknowledged writes are in the log")
        for event in outcomes { #expect(try reopened.read { try $0.event(at: event.seq) } == event) }
        #expect(try reopened.verify().isConsistent)
    }

    @Test func aBatchWithOneInvalidChangeOrEventWritesNothing() async throws {
        var configuration = Store.Configuration()
        configuration.maxEventBytes = 4_096
        let clock = ManualClock(start: CoreFixtures.epoch)
        configuration.physicalClock = clock.function
        try await withTemporaryStore(configuration: configuration) { store in
            try await store.put("notes", id: "keep", fields: ["title": "kept"])
            let dump = try ProjectionFixtures.projectionBytes(store)
            let good: [Change] = (0..<5).map { .put("notes", id: "good\($0)", fields: ["title": "fine"]) }
            let badChanges: [(String, Change, EventStoreError.Code)] = [
                ("bad name", .put("no spaces", id: "x", fields: ["a": 1]), .invalidName),
                ("empty patch", .patch("notes", id: "x", fields: [:]), .invalidEvent),
                ("NaN", .put("notes", id: "x", fields: ["a": .double(.nan)]), .invalidEvent),
                (
                    "too large", .put("notes", id: "x", fields: ["a": .string(String(repeating: "x", count: 5_000))]),
                    .eventTooLarge
                ),
            ]
            for (name, bad, code) in badChanges {
                for position in [0, 3, 5] {
                    var batch = good
                    batch.insert(bad, at: position)
                    await expectStoreError(code, "append: \(name) at \(position)") { _ = try await store.append(batch) }
                    await expectStoreError(code, "blocking append: \(name)") { _ = try store.append(batch) as [Event] }
                }
            }
            let origin = ReplicaID(high: 2, low: 2)
            let stamp = HLCTimestamp(physical: clock.now, logical: 0)
            let goodEvents = (1...5).map { (index: Int) -> Event in
                CoreFixtures.remote(
                    origin, UInt64(index), at: HLCTimestamp(physical: clock.now, logical: UInt16(index)),
                    item: "r\(index)",
                    fields: ["title": "remote"])
            }
            let badEvents: [(String, Event, EventStoreError.Code)] = [
                ("bad item", CoreFixtures.remote(origin, 9, at: stamp, item: "", fields: ["a": 1]), .invalidName),
                (
                    "delete with fields",
                    CoreFixtures.remote(origin, 9, at: stamp, item: "x", .delete, fields: ["a": 1]), .invalidEvent
                ),
                ("sequence 0", CoreFixtures.remote(origin, 0, at: stamp, item: "x", fields: ["a": 1]), .invalidEvent),
                ("no stamp", CoreFixtures.remote(origin, 9, at: .zero, item: "x", fields: ["a": 1]), .invalidEvent),
                (
                    "base after stamp",
                    CoreFixtures.remote(
                        origin, 9, at: stamp, base: HLCTimestamp(rawValue: stamp.rawValue + 1), item: "x",
                        fields: ["a": 1]), .invalidEvent
                ),
                (
                    "too large",
                    CoreFixtures.remote(
                        origin, 9, at: stamp, item: "x", fields: ["a": .string(String(repeating: "y", count: 5_000))]),
                    .eventTooLarge
                ),
                (
                    "far future",
                    CoreFixtures.remote(
                        origin, 9, at: HLCTimestamp(physical: clock.now + 61_000, logical: 0), item: "x",
                        fields: ["a": 1]), .clockSkew
                ),
            ]
            for (name, bad, code) in badEvents {
                var batch = goodEvents
                batch.insert(bad, at: 2)
                await expectStoreError(code, "ingest: \(name)") { _ = try await store.ingest(batch) }
                await expectStoreError(code, "blocking ingest: \(name)") {
                    _ = try store.ingest(batch) as Store.IngestResult
                }
            }
            #expect(try store.head() == 1)
            #expect(try ProjectionFixtures.projectionBytes(store) == dump, "nothing was written")
            #expect(try store.read { try $0.seq(of: goodEvents[0].id) } == nil)
            // The same good events go through on their own.
            #expect(try await store.ingest(goodEvents).appended.count == 5)
            #expect(try await store.append(good).count == 5)
            #expect(try store.head() == 11)
        }
    }

    @Test func closedAndReadOnlyStoresRefuseWrites() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.path)
        try await store.put("notes", id: "n1", fields: ["title": "x"])
        #expect(try Store.open(at: directory.path) === store, "one instance per path")
        store.close()
        #expect(store.isClosed)
        await expectStoreError(.closed) { try await store.put("notes", id: "n2", fields: ["title": "y"]) }
        await expectStoreError(.closed) {
            _ = try store.append([.put("notes", id: "n2", fields: ["title": "y"])]) as [Event]
        }

        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        let reader = try Store.open(at: directory.path, configuration: readOnly)
        defer { reader.close() }
        #expect(reader !== store)
        #expect(try reader.item("notes", "n1")?["title"] == "x")
        #expect(try reader.head() == 1)
        await expectStoreError(.readOnly) { try await reader.put("notes", id: "n3", fields: ["title": "z"]) }
        await expectStoreError(.readOnly) { try await reader.rebuildProjections() }
        await expectStoreError(.readOnly, "a writable open while read-only is held") {
            _ = try Store.open(at: directory.path)
        }
    }
}
