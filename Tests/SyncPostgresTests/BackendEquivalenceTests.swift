import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import SyncPostgres
import SyncTestSupport
import Testing

/// The PostgreSQL backend keeps the same log as the LMDB backend: the same pushes give the same
/// answers, seqs, log digests and pages, byte for byte and checksum for checksum.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct BackendEquivalenceTests {
    @Test func theSamePushesGiveTheSameLogPagesAndChecksums() async throws {
        let directory = TemporaryDirectory(prefix: "pg-equivalence")
        defer { directory.remove() }
        let (lmdb, postgres) = try await services(in: directory, maxPageBytes: 3_000)
        defer {
            lmdb.close()
            postgres.close()
        }

        // Three replicas write puts, patches and deletes of shared items, with text of every kind.
        var requests: [PushRequest] = []
        for index in 0..<3 {
            let replica = try Store.open(at: directory.appending("replica-\(index)"))
            defer { replica.close() }
            for round in 0..<12 {
                let item = "n\((round * 7 + index) % 9)"
                let change: Change =
                    switch round % 4 {
                    case 0: .put("notes", id: item, fields: ["title": "동기화 café \(round)", "tags": ["a", "b"]])
                    case 1: .patch("notes", id: item, fields: ["rank": .int(Int64(round)), "done": true])
                    case 2: .delete("notes", id: item)
                    default: .put("tasks", id: item, fields: ["due": .double(1.5 * Double(round)), "note": .null])
                    }
                try await replica.append([change])
            }
            let events = try allEvents(of: replica)
            for start in stride(from: 0, to: events.count, by: 5) {
                requests.append(
                    PushRequest(replica: replica.replicaID, events: Array(events[start..<min(start + 5, events.count)]))
                )
            }
        }
        // Interleave the replicas' batches, and push some twice (duplicates).
        requests = requests.enumerated().sorted { ($0.offset % 3, $0.offset) < ($1.offset % 3, $1.offset) }.map(
            \.element)
        requests += requests.prefix(4)

        for request in requests {
            let fromLMDB = try await lmdb.push(store: "notes", request)
            let fromPostgres = try await postgres.push(store: "notes", request)
            #expect(fromLMDB.accepted == fromPostgres.accepted && fromLMDB.duplicates == fromPostgres.duplicates)
            #expect(fromLMDB.head == fromPostgres.head && fromLMDB.digest == fromPostgres.digest)
            #expect(fromLMDB.highWater == fromPostgres.highWater)
        }
        // Another event under a held id is refused by both, the same way.
        var forged = requests[0].events[0]
        forged.fields["title"] = "forged"
        let conflict = PushRequest(replica: requests[0].replica, events: [forged])
        let refusals = [
            await refusal { try await lmdb.push(store: "notes", conflict) },
            await refusal { try await postgres.push(store: "notes", conflict) },
        ]
        #expect(refusals[0]?.code == .eventConflict && refusals[1]?.code == .eventConflict)
        #expect(refusals[0]?.message == refusals[1]?.message)

        let head = try await lmdb.info(store: "notes").head
        #expect(head == 36)
        #expect(try await postgres.info(store: "notes").head == head)
        for after in 0...head {
            for limit in [1, 4, 1000] {
                let a = try await lmdb.pull(store: "notes", after: after, limit: limit)
                let b = try await postgres.pull(store: "notes", after: after, limit: limit)
                #expect(a.events == b.events, "after \(after), limit \(limit)")
                #expect(a.next == b.next && a.head == b.head && a.digest == b.digest, "after \(after), limit \(limit)")
                #expect(a.checksum == b.checksum, "after \(after), limit \(limit)")
            }
        }
        // The byte limit cut pages at the same events.
        #expect(try await postgres.pull(store: "notes", after: 0, limit: 1000).events.count < Int(head))
        // Each signs its marks with its own key, and takes back the marks it signed.
        for service in [lmdb, postgres] {
            let info = try await service.info(store: "notes")
            let page = try await service.pull(store: "notes", after: 3, limit: 4)
            let signature = try #require(info.signature)
            #expect(page.signature != nil && page.signature != info.signature)
            let marks = [
                ContinuityCheck(epoch: info.epoch, seq: info.head, digest: info.digest, signature: signature),
                ContinuityCheck(epoch: page.epoch, seq: page.next, digest: page.digest, signature: page.signature),
            ]
            for mark in marks { _ = try await service.info(store: "notes", check: mark) }
            // A page past the head has no digest there, and no signature: a signed mark past the
            // head would prove a rewind that never was.
            let past = try await service.pull(store: "notes", after: head + 10)
            #expect(past.next == head + 10 && past.signature == nil)
            // A mark past the head that the server did not sign starts no epoch on either.
            let beyond = ContinuityCheck(epoch: info.epoch, seq: head + 5, digest: info.digest, signature: signature)
            let refusal = await refusal { try await service.info(store: "notes", check: beyond) }
            #expect(refusal?.code == .unverifiedMark)
            #expect(try await service.info(store: "notes").epoch == info.epoch)
        }
    }

    /// Pages of large events (bodies the database keeps out of line) and of events whose JSON is
    /// smaller than their stored bodies cut at the same events on both backends.
    @Test func pagesOfLargeAndOfSmallJSONEventsCutAlike() async throws {
        let directory = TemporaryDirectory(prefix: "pg-equivalence-large")
        defer { directory.remove() }
        let (lmdb, postgres) = try await services(in: directory, maxPageBytes: 700_000)
        defer {
            lmdb.close()
            postgres.close()
        }

        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            let change: Change
            if round % 10 == 0 {
                // Random text compresses badly: stored out of line, about 200 KB a body.
                let text = String(
                    (0..<200_000).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator))) })
                change = .put("notes", id: "big\(round)", fields: ["body": .string(text)])
            } else {
                // Short decimals: three bytes each in JSON, nine in the stored body.
                var fields: [String: Value] = [:]
                for field in 0..<2_000 { fields["f\(field)"] = .double(Double(field % 7) + 0.5) }
                change = .put("counters", id: "c\(round)", fields: fields)
            }
            try await replica.append([change])
        }
        let events = try allEvents(of: replica)
        for start in stride(from: 0, to: events.count, by: 4) {
            let request = PushRequest(
                replica: replica.replicaID, events: Array(events[start..<min(start + 4, events.count)]))
            _ = try await lmdb.push(store: "large", request)
            _ = try await postgres.push(store: "large", request)
        }
        let head = UInt64(events.count)
        for after in 0...head {
            for limit in [1, 3, 1000] {
                let a = try await lmdb.pull(store: "large", after: after, limit: limit)
                let b = try await postgres.pull(store: "large", after: after, limit: limit)
                // The checksum covers the page's bytes; the ids keep a failure's message short.
                #expect(a.events.map(\.id) == b.events.map(\.id), "after \(after), limit \(limit)")
                #expect(
                    a.next == b.next && a.digest == b.digest && a.checksum == b.checksum,
                    "after \(after), limit \(limit)")
            }
        }
        // Whole pages of either kind, read to the end, in more than one page.
        var after: UInt64 = 0
        var pages = 0
        while after < head {
            let page = try await postgres.pull(store: "large", after: after, limit: 1000)
            #expect(page.events.count > 0)
            after = page.next
            pages += 1
        }
        #expect(pages >= 3)
    }

    /// A service on each backend, with pages of at most `maxPageBytes`.
    private func services(in directory: TemporaryDirectory, maxPageBytes: Int) async throws -> (
        lmdb: SyncService, postgres: SyncService
    ) {
        var limits = SyncLimits()
        limits.maxPageBytes = maxPageBytes
        var lmdb = SyncService.Configuration(dataDirectory: directory.appending("server"))
        lmdb.limits = limits
        var postgres = SyncService.Configuration(backend: .postgres(try await TestPostgres.freshDatabase()))
        postgres.limits = limits
        return (try SyncService(configuration: lmdb), try SyncService(configuration: postgres))
    }

    private func refusal<T>(_ body: () async throws -> T) async -> SyncError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? SyncError
        }
    }
}
