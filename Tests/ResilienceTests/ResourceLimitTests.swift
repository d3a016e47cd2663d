import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import InMemoryLogging
import LMDB
import Logging
import NIOHTTP1
import SyncTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Map growth, reader-table exhaustion and a full disk: clear errors, no damage, recovery.
@Suite("Resource limits", .serialized)
struct ResourceLimitTests {
    /// Whether an error is a clear storage-level error (typed, with a message).
    static func describe(_ error: any Error) -> (code: String, text: String) {
        if let error = error as? EventStoreError { return ("EventStoreError.\(error.code)", "\(error)") }
        if let error = error as? LMDBError { return ("LMDBError", "\(error)") }
        return ("\(type(of: error))", "\(error)")
    }

    @Test("map growth from 1 MiB to 50+ MiB while readers loop")
    func mapGrowthUnderReaders() async throws {
        var configuration = Store.Configuration()
        configuration.mapSize = 1 << 20
        configuration.durability = .relaxed
        try await withTemporaryStore(configuration: configuration) { store in
            let stop = Atomic<Bool>(false)
            let reads = Atomic<Int>(0)
            let problems = Recorder<String>()
            let payload = String(repeating: "p", count: 2_000)
            let readers = (0..<4).map { index in
                Thread.detachNewThreadWithResult {
                    var generator = SeededGenerator(seed: UInt64(index))
                    while !stop.load(ordering: .relaxed) {
                        do {
                            try store.read { reader in
                                let head = try reader.head()
                                if head > 0 {
                                    let seq = UInt64.random(in: 1...head, using: &generator)
                                    guard let event = try reader.event(at: seq) else {
                                        problems.append("seq \(seq) missing below head \(head)")
                                        return
                                    }
                                    if event.seq != seq || event.fields["blob"]?.stringValue?.count != 2_000 {
                                        problems.append("seq \(seq) decoded wrong")
                                    }
                                    _ = try reader.item("bulk", event.item)
                                }
                            }
                            reads.add(1, ordering: .relaxed)
                        } catch {
                            problems.append("read failed: \(error)")
                        }
                    }
                }
            }
            let batches = 250
            for batch in 0..<batches {
                _ = try await store.append(
                    (0..<100).map { index in
                        .put(
                            "bulk", id: "b\(batch)-\(index)",
                            fields: ["blob": .string(payload), "n": .int(Int64(index))])
                    })
            }
            stop.store(true, ordering: .relaxed)
            for reader in readers { reader.wait() }
            let size = try FileManager.default.attributesOfItem(atPath: store.path + "/data.mdb")[.size] as? Int ?? 0
            print(
                "map growth: 1 MiB map grew to a \(size >> 20) MiB file with \(reads.load(ordering: .relaxed)) concurrent reads"
            )
            #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
            #expect(try store.head() == UInt64(batches * 100))
            #expect(try store.count(in: "bulk") == batches * 100)
            #expect(size >= 50 << 20)
            #expect(reads.load(ordering: .relaxed) > 0)
        }
    }

    @Test("more concurrent reads than reader slots: a clear error, then recovery")
    func readersExhausted() async throws {
        var configuration = Store.Configuration()
        configuration.maxReaders = 4
        try await withTemporaryStore(configuration: configuration) { store in
            _ = try await store.append([.put("notes", id: "a", fields: ["title": "alpha"])])
            let errors = Recorder<String>()
            let successes = Atomic<Int>(0)
            let threads = (0..<12).map { _ in
                Thread.detachNewThreadWithResult {
                    do {
                        try store.read { reader in
                            _ = try reader.head()
                            usleep(300_000)
                        }
                        successes.add(1, ordering: .relaxed)
                    } catch {
                        let (code, text) = ResourceLimitTests.describe(error)
                        errors.append("\(code): \(text)")
                    }
                }
            }
            for thread in threads { thread.wait() }
            let failures = errors.values
            print(
                "readers: 12 concurrent reads over 4 slots → \(successes.load(ordering: .relaxed)) succeeded, \(failures.count) refused: \(failures.first ?? "-")"
            )
            #expect(successes.load(ordering: .relaxed) >= 1)
            #expect(successes.load(ordering: .relaxed) + failures.count == 12)
            for failure in failures {
                #expect(failure.lowercased().contains("reader"), "unclear error: \(failure)")
            }
            // Recovery: once the readers are gone every read works again, many times over.
            for _ in 0..<50 { #expect(try store.item("notes", "a") != nil) }
            _ = try await store.append([.put("notes", id: "b", fields: ["title": "beta"])])
            #expect(try store.head() == 2)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test("disk full (4 MiB tmpfs): a clear .diskFull error, no damage, the store reopens and verifies")
    func diskFull() async throws {
        try await Tmpfs.withMounted(size: 4 << 20, prefix: "diskfull") { tmpfs, _ in
            let path = tmpfs.path + "/store"
            var acknowledged = 0
            var failure: (any Error)?
            do {
                let store = try Store.open(at: path)
                defer { store.close() }
                let payload = String(repeating: "d", count: 1_500)
                for batch in 0..<10_000 {
                    do {
                        let events = try await store.append(
                            (0..<20).map { index in
                                .put("fill", id: "f\(batch)-\(index)", fields: ["blob": .string(payload)])
                            })
                        acknowledged += events.count
                    } catch {
                        failure = error
                        break
                    }
                }
                // After the failure the store still reads and answers.
                #expect(try store.head() == UInt64(acknowledged))
            }
            let error = try #require(failure, "4 MiB filled without an error")
            let (code, text) = ResourceLimitTests.describe(error)
            print("disk full after \(acknowledged) events: \(code): \(text)")
            // ENOSPC (from liblmdb usually EIO, on a short write) reaches the caller as `.diskFull`, saying so.
            #expect(
                (error as? EventStoreError)?.code == .diskFull,
                "expected EventStoreError(.diskFull), got \(code): \(text)")
            #expect(text.contains("the disk is full"), "\(text)")
            // Reopen on the full disk: every acknowledged event is there and the projections verify.
            try withStore(at: path) { store in
                #expect(try store.head() == UInt64(acknowledged))
                #expect(try store.count(in: "fill") == acknowledged)
                let report = try store.verify()
                #expect(report.isConsistent, "\(report.problems.prefix(3))")
            }
        }
    }

    @Test("a backup onto a full disk: .diskFull, no partial copy left, the same destination usable again")
    func backupOntoAFullDisk() async throws {
        try await withTemporaryStore { store in
            let payload = String(repeating: "b", count: 1_500)
            for batch in 0..<20 {
                _ = try await store.append(
                    (0..<50).map { .put("fill", id: "f\(batch)-\($0)", fields: ["blob": .string(payload)]) })
            }
            try await Tmpfs.withMounted(size: 1 << 20, prefix: "diskfull-backup") { tmpfs, _ in
                let destination = tmpfs.path + "/backup"
                for attempt in 0..<2 {
                    let error = try #require(throws: EventStoreError.self) { try store.backup(to: destination) }
                    #expect(error.code == .diskFull, "attempt \(attempt): \(error)")
                    #expect(error.message.contains("the disk is full"), "\(error)")
                    #expect(!FileManager.default.fileExists(atPath: destination + "/data.mdb"), "no partial copy")
                }
            }
        }
    }

    @Test("creating a store with 0 to 160 KiB free: .diskFull or success, never a crash, never a poisoned directory")
    func creatingOnAFullDisk() async throws {
        try await Tmpfs.withMounted(size: 2 << 20, prefix: "diskfull-create") { tmpfs, _ in
            // Around the lock file (~33 KiB), its two meta pages, and the first commit of the layout.
            let levels = [0, 4, 8, 28, 32, 36, 40, 44, 48, 56, 64, 80, 96, 128, 160].map { $0 << 10 }
            var refused = 0
            for free in levels {
                let path = tmpfs.path + "/store-\(free >> 10)k"
                try tmpfs.fill(leaving: free)
                do {
                    let store = try Store.open(at: path)
                    store.close()
                } catch let error as EventStoreError {
                    refused += 1
                    #expect(error.code == .diskFull, "\(free >> 10) KiB free: \(error)")
                    #expect(error.message.contains("the disk is full"), "\(free >> 10) KiB free: \(error)")
                }
                // With space again, the same directory becomes a working store.
                tmpfs.emptyFiller()
                let store = try Store.open(at: path)
                _ = try await store.append([.put("notes", id: "a", fields: ["title": "after"])])
                #expect(try store.item("notes", "a")?["title"] == "after", "\(free >> 10) KiB free")
                #expect(try store.verify().isConsistent, "\(free >> 10) KiB free")
                store.close()
                try FileManager.default.removeItem(atPath: path)
            }
            print(
                "disk full: store creation refused at \(refused) of \(levels.count) free-space levels, each created afterwards"
            )
            #expect(refused >= 3, "0, 4 and 8 KiB cannot hold a store")
        }
    }

    @Test("a full disk: 200 concurrent readers of an open store (new lock-table pages) still read; writes fail clearly")
    func readersOnAFullDisk() async throws {
        try await Tmpfs.withMounted(size: 2 << 20, prefix: "diskfull-readers") { tmpfs, _ in
            let store = try Store.open(at: tmpfs.path + "/store")
            defer { store.close() }
            _ = try await store.append((0..<50).map { .put("notes", id: "n\($0)", fields: ["title": "note \($0)"]) })
            try tmpfs.fill(leaving: 0)
            // Each concurrent reader takes its own slot in the lock table: 200 slots reach pages of
            // the lock file no reader touched before.
            let successes = Atomic<Int>(0)
            let failures = Recorder<String>()
            let threads = (0..<200).map { _ in
                Thread.detachNewThreadWithResult {
                    do {
                        try store.read { reader in
                            if try reader.head() == 50 { successes.add(1, ordering: .relaxed) }
                            usleep(300_000)
                        }
                    } catch {
                        failures.append("\(error)")
                    }
                }
            }
            for thread in threads { thread.wait() }
            #expect(successes.load(ordering: .relaxed) == 200, "\(failures.values.prefix(3))")
            do {
                let blob = Value.string(String(repeating: "m", count: 1_000))
                _ = try await store.append((0..<200).map { .put("notes", id: "m\($0)", fields: ["title": blob]) })
                Issue.record("a 200 KB write succeeded on a full disk")
            } catch let error as EventStoreError {
                #expect(error.code == .diskFull, "\(error)")
            }
            tmpfs.emptyFiller()
            _ = try await store.append([.put("notes", id: "after", fields: ["title": "space again"])])
            #expect(try store.head() == 51)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test("a full disk under a live server: pushes get 507, every store is still served, all works once space is freed")
    func diskFullServer() async throws {
        try await Tmpfs.withMounted(size: 8 << 20, prefix: "diskfull-server") { tmpfs, directory in
            let logs = InMemoryLogHandler()
            let server = try await ServerHarness(
                dataDirectory: tmpfs.path + "/data", logger: Logger(label: "diskfull", factory: { _ in logs }))
            var clients: [String: Store] = [:]
            defer { for client in clients.values { client.close() } }
            /// Pushes `count` new events of a client of `store` (one client per store), or those it has already when 0.
            func push(_ store: String, _ count: Int, bytes: Int = 100) async throws -> RunningServer.Reply {
                let client = try clients[store] ?? Store.open(at: directory.appending("client-\(store)"))
                clients[store] = client
                let blob = Value.string(String(repeating: "b", count: bytes))
                let head = try client.head()
                _ = try await client.append(
                    (0..<count).map { .put("notes", id: "e\(head + UInt64($0))", fields: ["blob": blob]) })
                let events = try client.read { reader in
                    try (1...max(try reader.head(), 1)).compactMap { try reader.event(at: $0) }
                }
                let body = PushRequest(replica: client.replicaID, events: events).jsonBytes()
                return try await server.send(.POST, "/v1/stores/\(store)/events", body: body)
            }
            func expectInsufficientStorage(
                _ reply: RunningServer.Reply, _ label: String, sourceLocation: SourceLocation = #_sourceLocation
            ) {
                #expect(reply.status == 507, "\(label): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
                #expect(
                    reply.problem?.code == "insufficient-storage", "\(label): \(reply.text)",
                    sourceLocation: sourceLocation)
                #expect(
                    reply.text.contains("urn:eventstore:sync:insufficient-storage"), "\(label)",
                    sourceLocation: sourceLocation)
                #expect(reply.text.contains("disk is full"), "\(label): \(reply.text)", sourceLocation: sourceLocation)
            }
            for store in ["notes", "other"] {
                let reply = try await push(store, 5)
                #expect(reply.status == 200, "seeding \(store): \(reply.text)")
            }
            try tmpfs.fill(leaving: 0)

            // A push that would create a store: 507, and nothing left that could pass for a store.
            expectInsufficientStorage(try await push("fresh", 3), "push creating a store")
            #expect(
                !FileManager.default.fileExists(atPath: tmpfs.path + "/data/fresh"),
                "the failed creation was cleaned up")
            #expect(try await server.send(.GET, "/v1/stores/fresh").status == 404)

            // Pushes to an existing store: accepted while free pages inside its file last, then 507;
            // the head moves only with a 200.
            var refusedAt: Int?
            for round in 0..<60 where refusedAt == nil {
                let before = try await server.head(of: "notes")
                let reply = try await push("notes", 10, bytes: 1_000)
                let after = try await server.head(of: "notes")
                if reply.status == 200 {
                    #expect(after == before + 10, "round \(round)")
                } else {
                    expectInsufficientStorage(reply, "push \(round) to notes")
                    #expect(after == before, "round \(round): a refused push changed the head")
                    refusedAt = round
                }
            }
            #expect(refusedAt != nil, "60 pushes of 10 KB fit on a full 8 MiB disk")
            let notesHead = try await server.head(of: "notes")

            // Meanwhile every store is served, by many requests at once.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    let store = ["notes", "other"][index / 2 % 2]
                    let path = index % 2 == 0 ? "/v1/stores/\(store)" : "/v1/stores/\(store)/events?after=0"
                    group.addTask { try await server.send(.GET, path).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            let page = try PullPage(
                json: try await server.send(.GET, "/v1/stores/notes/events?after=0&limit=1000").body)
            #expect(page.events.count == Int(notesHead) && page.head == notesHead)
            #expect(try await server.send(.GET, "/healthz").status == 200)

            // With space again, the same pushes succeed.
            tmpfs.emptyFiller()
            let created = try await push("fresh", 0)
            #expect(created.status == 200, "\(created.text)")
            #expect(try await server.head(of: "fresh") == 3)
            let resumed = try await push("notes", 1)
            #expect(resumed.status == 200, "\(resumed.text)")
            #expect(try await server.head(of: "notes") == notesHead + 11, "the refused batch and one more")
            try await server.stop()

            // A full disk is the server's fault: logged at error (and only that).
            let errors = logs.entries.filter { $0.level >= .error }
            #expect(errors.count == 2, "\(errors.map { "\($0.message) \($0.metadata)" })")
            #expect(errors.allSatisfy { $0.metadata["problem"] == "insufficient-storage" })
            print(
                "disk full: server answered 507 for a new store and after \(refusedAt ?? -1) accepted pushes to an",
                "existing one; \(statuses.count) concurrent reads served")
        }
    }
}

/// A thread that can be joined.
final class JoinableThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread.detachNewThread {
            body()
            done.signal()
        }
    }
    func wait() { done.wait() }
}

extension Thread {
    /// Starts `body` on a new thread; `wait()` on the result joins it.
    static func detachNewThreadWithResult(_ body: @escaping @Sendable () -> Void) -> JoinableThread {
        JoinableThread(body)
    }
}
