#if ENABLE_MOCKING
    import Foundation
    import LMDB
    import Synchronization
    import Testing

    @testable import EventStore
    import EventStoreTestSupport

    /// Storage failures forced in the LMDB layer (debug builds): the write that hit one fails with a
    /// storage error, the store is left exactly as it was, and the next write succeeds.
    struct StoreFailureTests {
        typealias F = ProjectionFixtures

        /// Without merge steps computed between commits: their thread's reads would take failures
        /// forced for the reads these tests make.
        static var configuration: Store.Configuration {
            var configuration = F.configuration()
            configuration.mergesAhead = false
            return configuration
        }

        /// What a failure must not change: the log, the items, the search index, the checkpoint.
        struct Snapshot: Equatable {
            var head: UInt64
            var projections: [String: [[UInt8]]]
            var meta: [String: [UInt8]]

            init(_ store: Store) throws {
                head = try store.head()
                projections = try F.projectionBytes(store)
                meta = Dictionary(
                    uniqueKeysWithValues: try store.read { try $0.allMetadata() }.map { ($0.key, $0.value) })
            }
        }

        /// Expects a storage error caused by `cause` (``EventStoreError/Code/diskFull`` for `ENOSPC`).
        static func expectStorageError(
            _ cause: LMDBError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
        ) async {
            do {
                try await body()
                Issue.record("expected a storage error", sourceLocation: sourceLocation)
            } catch let error as EventStoreError {
                #expect(
                    error.code == (cause == .noSpace ? .diskFull : .storage), "\(error)", sourceLocation: sourceLocation
                )
                #expect((error.cause as? LMDBError) == cause, "\(error)", sourceLocation: sourceLocation)
            } catch {
                Issue.record(
                    "expected EventStoreError(.storage) caused by \(cause), got \(type(of: error)): \(error)",
                    sourceLocation: sourceLocation)
            }
        }

        static func filled(_ store: Store) async throws {
            try await store.append(
                (0..<20).map { .put("notes", id: "n\($0)", fields: ["title": "sync note \($0)", "tags": ["work"]]) })
        }

        @Test func aFailedCommitChangesNothingAndTheNextWriteSucceeds() async throws {
            try await withTemporaryStore(configuration: Self.configuration) { store async throws in
                try await Self.filled(store)
                let before = try Snapshot(store)
                let environment = try Environment.open(path: store.path)
                #expect(environment === store.environment, "the store's own environment")
                environment._forceFailure(.txnCommit, error: .ioError)
                await Self.expectStorageError(.ioError) {
                    try await store.append([
                        .put("notes", id: "lost", fields: ["title": "offline"]), .delete("notes", id: "n1"),
                    ])
                }
                #expect(try Snapshot(store) == before)
                #expect(try store.search("offline", in: "notes").isEmpty)

                let next = try await store.put("notes", id: "kept", fields: ["title": "offline"])
                #expect(next.seq == before.head + 1)
                #expect(next.id.sequence == before.head + 1, "the failed write used no origin sequence")
                #expect(try store.search("offline", in: "notes").map(\.item.id) == ["kept"])
                #expect(try store.item("notes", "n1") != nil)
                #expect(try store.verify().isConsistent)
            }
        }

        @Test(arguments: [LMDBError.noSpace, .ioError, .transactionFull])
        func aFailedPutChangesNothing(error: LMDBError) async throws {
            try await withTemporaryStore(configuration: Self.configuration) { store async throws in
                try await Self.filled(store)
                let before = try Snapshot(store)
                store.environment._forceFailure(.put, error: error)
                await Self.expectStorageError(error) {
                    try await store.patch("notes", id: "n3", fields: ["title": "changed"])
                }
                #expect(try Snapshot(store) == before)
                try await store.patch("notes", id: "n3", fields: ["title": "changed"])
                #expect(try store.item("notes", "n3")?["title"] == "changed")
            }
        }

        @Test func aFailedCommitFailsEveryWriterOfTheGroupAndNoEventIsLost() async throws {
            try await withTemporaryStore(configuration: Self.configuration) { store async throws in
                try await Self.filled(store)
                store.environment._forceFailure(.txnCommit, error: .ioError)
                let succeeded = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            do {
                                try await store.put("notes", id: "c\(index)", fields: ["title": "concurrent"])
                                return "c\(index)"
                            } catch let error as EventStoreError where error.code == .storage {
                                return nil
                            } catch let error as LMDBError where error == .ioError {
                                return nil
                            }
                        }
                    }
                    return try await group.reduce(into: Set<String>()) { if let id = $1 { $0.insert(id) } }
                }
                // Exactly the writers whose commit succeeded are in the store, each once.
                let stored = Set(try F.items(store, in: "notes").map(\.id).filter { $0.hasPrefix("c") })
                #expect(stored == succeeded)
                #expect(succeeded.count < 40, "at least one group failed")
                #expect(try store.head() == UInt64(20 + succeeded.count))
                #expect(try store.verify().isConsistent)
            }
        }

        @Test func eventsWhoseIngestFailedAreNotTakenForDuplicatesLater() async throws {
            try await withTemporaryStore(configuration: Self.configuration) { store async throws in
                let origin = ReplicaID(high: 77, low: 1)
                let events = (1...5 as ClosedRange<UInt64>).map {
                    F.event(
                        origin, $0, at: HLCTimestamp(physical: F.epoch, logical: UInt16($0)), "notes", "r\($0)", .put,
                        ["title": "remote"])
                }
                store.environment._forceFailure(.txnCommit, error: .ioError)
                await Self.expectStorageError(.ioError) { _ = try await store.ingest(events) }
                #expect(try store.head() == 0)
                let result = try await store.ingest(events)
                #expect(result.appended.map(\.id) == events.map(\.id))
                #expect(result.duplicates.isEmpty)
            }
        }

        @Test func aFullMapDuringAnAppendGrowsItAndWritesEachEventOnce() async throws {
            var configuration = Self.configuration
            configuration.mapSize = 1 << 20
            try await withTemporaryStore(configuration: configuration) { store async throws in
                try await Self.filled(store)
                store.environment._forceFailure(.put, error: .mapFull)
                let events = try await store.append(
                    (0..<10).map { .put("notes", id: "g\($0)", fields: ["title": "grown"]) })
                #expect(events.map(\.seq) == Array(21...30))
                #expect(try store.head() == 30)
                #expect(store.environment.info().mapSize > 1 << 20)
                #expect(try store.search("grown", in: "notes", limit: 50).count == 10)
                #expect(try store.verify().isConsistent)
            }
        }

        @Test func aFailedRebuildKeepsTheActiveProjections() async throws {
            try await withTemporaryStore(configuration: Self.configuration) { store async throws in
                try await Self.filled(store)
                let before = try Snapshot(store)
                let generation = try store.read { try $0.activeGeneration() }
                store.environment._forceFailure(.put, error: .ioError)
                await #expect(throws: (any Error).self) { try await store.rebuildProjections() }
                #expect(try store.read { try $0.activeGeneration() } == generation)
                #expect(try Snapshot(store) == before)
                #expect(try store.search("sync", in: "notes", limit: 50).count == 20)
                try await store.put("notes", id: "after", fields: ["title": "sync"])
                try await store.rebuildProjections()
                #expect(try store.read { try $0.activeGeneration() } == 1 - generation)
                #expect(try store.verify().isConsistent)
            }
        }

        /// A read that fails during a rebuild fails it: the store keeps the projections it had, and
        /// the next rebuild succeeds. The log of 20 events is read ahead in one batch (a seek, 20
        /// entries and the end: reads 0 to 21), the failure coming at the chunk of 7 events that
        /// needs the event; read 22 looks for events appended during the rebuild, at the switch.
        @Test(arguments: [0, 2, 10, 21, 22])
        func aRebuildWhoseReadFailsKeepsTheActiveProjections(failAfterReads: Int) async throws {
            var configuration = Self.configuration
            configuration.rebuildChunkEvents = 7
            try await withTemporaryStore(configuration: configuration) { store async throws in
                try await Self.filled(store)
                let before = try Snapshot(store)
                let generation = try store.read { try $0.activeGeneration() }
                store.environment._forceFailure(.cursorGet, error: .ioError, after: failAfterReads)
                await #expect(throws: (any Error).self) { try await store.rebuildProjections() }
                #expect(try store.read { try $0.activeGeneration() } == generation)
                #expect(try Snapshot(store) == before)
                try await store.rebuildProjections()
                #expect(try store.read { try $0.activeGeneration() } == 1 - generation)
                #expect(try store.search("sync", in: "notes", limit: 50).count == 20)
                #expect(try store.verify().isConsistent)
            }
        }

        /// A rebuild indexes search once per item at the end (DeferredIndex); a replay transaction
        /// retried halfway (the map filled) must not allocate doc ids twice, nor apply an event
        /// twice, nor skip a chunk whose checkpoint failed. Holding every record, the retry
        /// restarts the rebuild, which holds them again; with 7 held, the rebuild goes in passes
        /// of 6 items or so, and a retried chunk of a pass whose records were written (or the
        /// retried write that writes them) applies its events again to them.
        @Test(arguments: [1, 2, 3, 5, 8, 150, 399], [100_000, 7])
        func aRebuildRetriedAfterAFullMapGivesTheSameProjections(failAfterPuts: Int, heldRecords: Int) async throws {
            var configuration = Self.configuration
            configuration.search.collections["logs"] = []  // not searchable
            configuration.replayRecordLimit = heldRecords
            configuration.rebuildChunkEvents = 10
            try await withTemporaryStore(configuration: configuration) { store async throws in
                try await Self.filled(store)
                try await store.append((0..<30).map { .put("logs", id: "l\($0)", fields: ["title": "log \($0)"]) })
                try await store.append((0..<10).map { .delete("notes", id: "n\($0)") })
                try await store.append((0..<5).map { .put("notes", id: "n\($0)", fields: ["title": "back again"]) })
                try await store.append(
                    (0..<20).map { .patch("notes", id: "n\($0)", fields: ["content": "edited \($0)"]) })
                let bytes = try F.projectionBytes(store)
                store.environment._forceFailure(.put, error: .mapFull, after: failAfterPuts)
                let progress = Mutex<[UInt64]>([])
                try await store.rebuildProjections { update in progress.withLock { $0.append(update.processed) } }
                // A rebuild that started over does not report going back.
                let processed = progress.withLock { $0 }
                #expect(processed == processed.sorted() && Set(processed).count == processed.count)
                #expect(processed.last == (try store.head()))
                #expect(try F.projectionBytes(store) == bytes)
                #expect(try store.verify().isConsistent)
                #expect(
                    try store.search("again", in: "notes", limit: 50).map(\.item.id).sorted() == [
                        "n0", "n1", "n2", "n3", "n4",
                    ])
            }
        }

        /// A verify's or a replay's scratch build whose chunk runs again (the map filled) while it
        /// holds item records starts over without holding them and builds the same, and a replay
        /// counts each event it applied once. The failures land on the replay's puts (the four
        /// chunks' checkpoints and counts, puts 0 to 5).
        @Test(arguments: [0, 1, 3, 5])
        func aScratchBuildRetriedAfterAFullMapStartsOverAndBuildsTheSame(failAfterPuts: Int) async throws {
            var configuration = Self.configuration
            configuration.rebuildChunkEvents = 10
            try await withTemporaryStore(configuration: configuration) { store async throws in
                try await Self.filled(store)
                try await store.append(
                    (0..<20).map { .patch("notes", id: "n\($0 % 7)", fields: ["content": "edited \($0)"]) })
                let head = try store.head()
                let clean = try ScratchProjections(configuration: configuration)
                #expect(try clean.build(from: store, through: head, progress: nil) == head)
                #expect(!clean.restarted)
                let retried = try ScratchProjections(configuration: configuration)
                retried.environment._forceFailure(.put, error: .mapFull, after: failAfterPuts)
                #expect(try retried.build(from: store, through: head, progress: nil) == head)
                #expect(retried.restarted)
                #expect(try F.scratchContents(retried) == F.scratchContents(clean))
            }
        }

        /// Another process grew the map: the next transaction to begin here adopts the new size,
        /// which waits for every transaction of this process to end. A rebuild, whose log is read
        /// on another thread, and a verify, which holds its snapshot throughout, must not wait for
        /// a read that waits for them.
        @Test(arguments: [0, 1, 2, 3, 5, 9])
        func aMapResizedDuringARebuildOrAVerifyIsAdoptedWithoutWaitingForever(failAfterBegins: Int) async throws {
            var configuration = Self.configuration
            configuration.rebuildChunkEvents = 7
            try await withTemporaryStore(configuration: configuration) { store async throws in
                try await Self.filled(store)
                try await store.append((0..<5).map { .put("notes", id: "n\($0)", fields: ["title": "back again"]) })
                let bytes = try F.projectionBytes(store)
                for function in [LMDBFunction.txnBegin, .txnRenew] {
                    store.environment._forceFailure(function, error: .mapResized, after: failAfterBegins)
                    try await store.rebuildProjections()
                    #expect(try F.projectionBytes(store) == bytes)
                }
                store.environment._forceFailure(.txnBegin, error: .mapResized, after: failAfterBegins)
                #expect(try store.verify().isConsistent)
                store.environment._forceFailure(.txnRenew, error: .mapResized, after: failAfterBegins)
                #expect(try store.verify().isConsistent)
            }
        }

        @Test func aFailedReadIsReportedAndTheNextReadSucceeds() async throws {
            try await withTemporaryStore(configuration: Self.configuration) { store async throws in
                try await Self.filled(store)
                store.environment._forceFailure(.get, error: .ioError)
                #expect(throws: (any Error).self) { _ = try store.item("notes", "n1") }
                #expect(try store.item("notes", "n1")?["title"] == "sync note 1")
            }
        }
    }
#endif
