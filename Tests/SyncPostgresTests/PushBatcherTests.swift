import EventStore
import EventStoreTestSupport
import EventSync
import Logging
import PostgresNIO
import SyncTestSupport
import Synchronization
import Testing

@testable import EventSyncService
@testable import SyncPostgres

/// The pushes that wait for one store on an instance commit in one transaction, and each push
/// of a batch succeeds or fails alone.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct PushBatcherTests {
    @Test func pushesWaitingForAStoreCommitTogetherAndABadOneFailsAlone() async throws {
        let directory = TemporaryDirectory(prefix: "pg-batch")
        defer { directory.remove() }
        var database = try await TestPostgres.freshDatabase()
        // The pushes wait behind a held lock for as long as a loaded machine needs to queue them.
        database.requestTimeout = .seconds(300)
        let service = try SyncService(configuration: .init(backend: .postgres(database)))
        defer { service.close() }
        let storage = try #require(service.storage as? PostgresSyncStorage)

        // The store exists with one event of the first replica.
        let first = try Store.open(at: directory.appending("first"))
        defer { first.close() }
        let held = try await first.put("notes", id: "held", fields: ["title": "as written"])
        _ = try await service.push(store: "notes", PushRequest(replica: first.replicaID, events: [held]))

        // Twelve replicas with five events each, and two pushes that must fail: one repeats the
        // held event's id with other content, one pushes new events of a replica that another
        // credential owns by then.
        var good: [(SyncCredential, PushRequest)] = []
        var stolen: PushRequest?
        for index in 0..<12 {
            let replica = try Store.open(at: directory.appending("replica-\(index)"))
            defer { replica.close() }
            try await replica.append(
                (0..<5).map { .put("notes", id: "r\(index)-\($0)", fields: ["n": .int(Int64($0))]) })
            good.append(
                (
                    SyncCredential(id: "user-\(index)"),
                    PushRequest(replica: replica.replicaID, events: try allEvents(of: replica))
                ))
            if index == 3 {
                try await replica.put("notes", id: "r3-new", fields: ["n": 5])
                stolen = PushRequest(replica: replica.replicaID, events: try allEvents(of: replica))
            }
        }
        // The conflicting push starts with a new event, which must not stay when the push fails.
        let unkept = try await first.put("notes", id: "unkept", fields: ["title": "in a refused push"])
        var forged = held
        forged.fields["title"] = "rewritten"
        let conflicting = PushRequest(replica: first.replicaID, events: [unkept, forged])
        let pushes = good + [(.trusted, conflicting), (SyncCredential(id: "thief"), try #require(stolen))]

        // Hold the store's row lock, so that every push queues behind the first transaction.
        let before = storage.batcher.transactions
        let key = PushBatcher.Key(store: "notes", create: true)
        let results = try await TestPostgres.withAdminClient(database) { client in
            try await client.withTransaction(logger: Logger(label: "test")) { connection in
                _ = try await connection.query(
                    "SELECT name FROM evstore_stores WHERE name = 'notes' FOR UPDATE", logger: Logger(label: "test"))
                // Each push starts once the one before it is queued, so the queue keeps their order
                // (the thief's push comes after replica 3's own).
                var tasks: [Task<Result<PushResponse, SyncError>, Never>] = []
                let deadline = ContinuousClock.now + .seconds(30)
                for (index, push) in pushes.enumerated() {
                    tasks.append(
                        Task {
                            do {
                                return .success(try await service.push(store: "notes", push.1, credential: push.0))
                            } catch let error as SyncError {
                                return .failure(error)
                            } catch {
                                return .failure(SyncError(.internalError, "\(error)"))
                            }
                        })
                    // The first push leads (its transaction waits for the lock); the others queue.
                    while index == 0
                        ? storage.batcher.transactions == before : storage.batcher.waiting(for: key) < index,
                        ContinuousClock.now < deadline
                    {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                try await Task.sleep(for: .milliseconds(50))
                #expect(storage.batcher.waiting(for: key) == tasks.count - 1)
                return tasks
            }
        }
        var outcomes: [Result<PushResponse, SyncError>] = []
        for task in results { outcomes.append(await task.value) }

        // The twelve good pushes were accepted whole (the thief's came after replica 3's own, so
        // user-3 owns replica 3 by then); the two bad ones failed with their reasons.
        for (index, outcome) in outcomes.prefix(12).enumerated() {
            #expect((try? outcome.get().accepted) == 5, "push \(index): \(outcome)")
        }
        if case .failure(let error) = outcomes[12] {
            #expect(error.code == .eventConflict, "\(error)")
        } else {
            Issue.record("a push rewriting a held event was accepted")
        }
        if case .failure(let error) = outcomes[13] {
            #expect(error.code == .replicaNotOwned, "\(error)")
        } else {
            Issue.record("a push under another credential's replica was accepted")
        }
        // The leader's push ran alone, the thirteen that queued behind it in one transaction.
        #expect(storage.batcher.transactions - before == 2)

        let page = try await service.pull(store: "notes", after: 0, limit: 1000)
        #expect(page.events.map(\.seq) == Array(1...61))
        #expect(page.events.first?.fields["title"] == "as written")
        #expect(!page.events.contains { $0.id == unkept.id })
        #expect(Set(page.events.dropFirst().map(\.id)) == Set(good.flatMap { $0.1.events.map(\.id) }))
        for (credential, push) in good {
            let info = try await service.info(store: "notes", replica: push.replica)
            #expect(info.replicaHighWater == 5, "\(credential.id)")
        }
        // The store's head and digest are those of the log the pull reads.
        let info = try await service.info(store: "notes")
        #expect(page.head == 61 && page.digest == info.digest)
    }
}

/// How the batcher cuts its queue, without a database.
struct PushBatchSizeTests {
    /// A push of `count` events of about `size` bytes each, of a replica of its own.
    static func push(_ count: Int, bytes size: Int) throws -> CheckedPush {
        let replica = ReplicaID.random()
        let events = try (1...count).map { sequence in
            try CheckedEvent(
                Event(
                    id: EventID(origin: replica, sequence: UInt64(sequence)),
                    hlc: HLCTimestamp(physical: 1_800_000_000_000, logical: UInt16(sequence)), collection: "notes",
                    item: "n\(sequence)", operation: .put,
                    fields: ["body": .string(String(repeating: "x", count: size))]),
                limit: 1 << 30)
        }
        return CheckedPush(
            request: PushRequest(replica: replica, events: events.map(\.event)), events: events, check: nil,
            credential: .trusted, maxClockSkewMilliseconds: 60_000, serverTime: 1_800_000_000_000)
    }

    /// Every push of a batch accepted whole.
    static func accepted(_ pushes: [CheckedPush]) -> [Result<PushOutcome, SyncError>] {
        pushes.map { push in
            .success(
                PushOutcome(
                    response: PushResponse(
                        accepted: push.events.count, duplicates: 0, head: 0, digest: .empty, epoch: "e",
                        replica: push.request.replica, highWater: 0), rotatedEpoch: nil))
        }
    }

    @Test func aBatchStopsAtItsByteBudgetAndAnOversizedPushRunsAlone() async throws {
        // Waits as long as a loaded machine needs to queue them all.
        let batcher = PushBatcher(maxBytes: 13_000, maxWait: .seconds(600))
        let key = PushBatcher.Key(store: "notes", create: false)
        let gate = AsyncStream<Void>.makeStream()
        // Each batch: its pushes' sizes in bytes.
        let batches = Mutex<[[Int]]>([])
        let entered = Mutex(false)
        let apply: PushBatcher.Apply = { pushes in
            // The first batch waits until every push is queued behind it.
            if batches.withLock({ $0.isEmpty }) {
                entered.withLock { $0 = true }
                for await _ in gate.stream { break }
            }
            batches.withLock { $0.append(pushes.map { $0.events.reduce(0) { $0 + $1.byteCount } }) }
            return Self.accepted(pushes)
        }
        // Pushes of about 6 kB: two fit a batch, three do not; one of 20 kB runs alone.
        let pushes = try (0..<5).map { _ in try Self.push(3, bytes: 2_000) } + [try Self.push(1, bytes: 20_000)]
        var tasks: [Task<Int, any Error>] = []
        for (index, push) in pushes.enumerated() {
            tasks.append(Task { try await batcher.submit(push, to: key, apply: apply).response.accepted })
            // The first push's transaction runs alone (and waits); the others queue behind it.
            while index == 0 ? !entered.withLock({ $0 }) : batcher.waiting(for: key) < index {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        gate.continuation.yield()
        gate.continuation.finish()
        var accepted: [Int] = []
        for task in tasks { accepted.append(try await task.value) }
        #expect(accepted == [3, 3, 3, 3, 3, 1])
        // The first alone, then two by two (a third would pass 13 kB), the large one alone.
        let sizes = batches.withLock { $0 }
        #expect(sizes.map(\.count) == [1, 2, 2, 1], "\(sizes)")
        #expect(sizes.dropLast().allSatisfy { $0.reduce(0, +) <= 13_000 }, "\(sizes)")
        #expect(sizes.last.map { $0[0] > 13_000 } == true, "\(sizes)")
    }

    /// Pushes that would pass the bytes allowed to wait are refused at once; a push whose caller
    /// is cancelled, or that waited too long, leaves the queue and is never applied, and is
    /// answered then, while the transaction ahead of it still runs.
    @Test func aFullQueueRefusesAndAPushThatLeftIsNeverApplied() async throws {
        // The batcher's clock jumps past the wait limit when the test says so (a wait on the
        // machine's clock would let a starved test expire the first push before it starts).
        let ahead = Mutex(Duration.zero)
        let batcher = PushBatcher(
            maxQueuedBytes: 13_000, maxWait: .seconds(600), now: { .now + ahead.withLock { $0 } },
            sleep: { duration in
                while ahead.withLock({ $0 }) < duration, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(1))
                }
            })
        let key = PushBatcher.Key(store: "notes", create: false)
        let gate = AsyncStream<Void>.makeStream()
        let applied = Mutex<[ReplicaID]>([])
        let entered = Mutex(false)
        let apply: PushBatcher.Apply = { pushes in
            if !entered.withLock({ $0 }) {
                entered.withLock { $0 = true }
                for await _ in gate.stream { break }
            }
            applied.withLock { $0 += pushes.map(\.request.replica) }
            return Self.accepted(pushes)
        }
        func submit(_ push: CheckedPush) -> Task<Int, any Error> {
            Task { try await batcher.submit(push, to: key, apply: apply).response.accepted }
        }
        // The first push's transaction waits at the gate; two pushes of about 6 kB wait behind it.
        let pushes = try (0..<4).map { _ in try Self.push(3, bytes: 2_000) }
        let leader = submit(pushes[0])
        while !entered.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        let expiring = submit(pushes[1])
        while batcher.waiting(for: key) < 1 { try await Task.sleep(for: .milliseconds(1)) }
        let cancelled = submit(pushes[2])
        while batcher.waiting(for: key) < 2 { try await Task.sleep(for: .milliseconds(1)) }
        // A third would pass 13 kB waiting: refused at once, with an error the client retries.
        await expectSyncError(.unavailable) { try await batcher.submit(pushes[3], to: key, apply: apply) }
        cancelled.cancel()
        await expectSyncError(.unavailable) { try await cancelled.value }
        #expect(batcher.waiting(for: key) == 1)
        // The other waits past its limit: it is answered while the transaction ahead of it runs.
        ahead.withLock { $0 = .seconds(3_600) }
        let answered = ContinuousClock.now + .seconds(30)
        while batcher.waiting(for: key) > 0, ContinuousClock.now < answered {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(batcher.waiting(for: key) == 0)
        if batcher.waiting(for: key) == 0 { await expectSyncError(.unavailable) { try await expiring.value } }
        gate.continuation.yield()
        gate.continuation.finish()
        #expect(try await leader.value == 3)
        await expectSyncError(.unavailable) { try await expiring.value }
        #expect(applied.withLock { $0 } == [pushes[0].request.replica])
        #expect(batcher.queuedBytes == 0)
        // The queue takes pushes again.
        #expect(try await submit(pushes[3]).value == 3)
        #expect(applied.withLock { $0 } == [pushes[0].request.replica, pushes[3].request.replica])
    }
}
