import EventStore
import EventStoreTestSupport
import EventSync
import SyncTestSupport
import Synchronization
import Testing

@testable import EventSyncService
@testable import SyncPostgres

/// Callers asking the same thing at the same time share one read; live pulls that one commit
/// wakes share their reads of the head and the page.
struct SharedReadsTests {
    @Test func callersOfOneKeyShareTheRunningReadAndALaterCallerReadsAgain() async throws {
        let reads = SharedReads<String, Int>()
        let gate = AsyncStream<Void>.makeStream()
        let started = Mutex(0)
        let read: @Sendable () async throws -> Int = {
            let number = started.withLock {
                $0 += 1
                return $0
            }
            for await _ in gate.stream { break }
            return number
        }
        var callers: [Task<Int, any Error>] = []
        for _ in 0..<10 { callers.append(Task { try await reads.value(for: "a", read) }) }
        let other = Task { try await reads.value(for: "b", { 99 }) }
        while started.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        try await Task.sleep(for: .milliseconds(50))
        gate.continuation.yield()
        gate.continuation.finish()
        for caller in callers { #expect(try await caller.value == 1) }
        #expect(try await other.value == 99)
        #expect(reads.count == 2)
        // The read ended: the next caller reads afresh.
        #expect(try await reads.value(for: "a", read) == 2)
        #expect(reads.count == 3)
    }
}

@Suite(.enabled(if: TestPostgres.isEnabled))
struct SharedLivePullTests {
    @Test func livePullsThatOneCommitWakesShareTheirReads() async throws {
        let directory = TemporaryDirectory(prefix: "pg-shared-reads")
        defer { directory.remove() }
        let service = try SyncService(configuration: .init(backend: .postgres(try await TestPostgres.freshDatabase())))
        defer { service.close() }
        let storage = try #require(service.storage as? PostgresSyncStorage)
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let first = try await replica.put("notes", id: "first", fields: ["title": "creates the store"])
        _ = try await service.push(store: "notes", PushRequest(replica: replica.replicaID, events: [first]))

        let waiting = (0..<40).map { _ in Task { try await service.pull(store: "notes", after: 1, wait: .seconds(20)) }
        }
        try await Task.sleep(for: .milliseconds(500))
        let pagesBefore = storage.sharedPages.count
        let event = try await replica.put("notes", id: "n1", fields: ["title": "wakes them"])
        _ = try await service.push(store: "notes", PushRequest(replica: replica.replicaID, events: [event]))
        for pull in waiting {
            #expect(try await pull.value.events.map(\.id) == [event.id])
        }
        let pageReads = storage.sharedPages.count - pagesBefore
        #expect(pageReads >= 1 && pageReads < 20, "40 woken pulls read the page \(pageReads) times")
    }
}
