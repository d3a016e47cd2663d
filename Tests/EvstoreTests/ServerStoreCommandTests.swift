import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import PostgresNIO
import SyncPostgres
import SyncTestSupport
import Testing

/// `evstore dump` and `verify` on a store a sync server keeps in PostgreSQL.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct ServerStoreCommandTests {
    @Test("dump --events/--meta and verify read a PostgreSQL server store; verify finds a tampered digest")
    func dumpAndVerifyAPostgresStore() async throws {
        try await withTemporaryDirectory(prefix: "server-store-tool") { directory in
            let database = try await TestPostgres.freshDatabase()
            let url = TestPostgres.url(of: database)
            let service = try SyncService(configuration: .init(backend: .postgres(database)))
            defer { service.close() }
            let replica = try Store.open(at: directory.appending("replica"))
            defer { replica.close() }
            try await replica.append(
                (0..<1200).map { .put("notes", id: "n\($0 % 50)", fields: ["title": .string("note \($0)")]) })
            try await replica.put("tasks", id: "t1", fields: ["title": "a task"])
            let events = try allEvents(of: replica)
            for start in stride(from: 0, to: events.count, by: 500) {
                _ = try await service.push(
                    store: "notes",
                    PushRequest(
                        replica: replica.replicaID, events: Array(events[start..<min(start + 500, events.count)])))
            }

            let dump = try await EvstoreProcess.run([
                "dump", "notes", "--postgres", url, "--events", "--format", "jsonl",
            ])
            #expect(dump.status == 0, "\(dump)")
            #expect(dump.lines.count == 1201)
            let filtered = try await EvstoreProcess.run(
                ["dump", "notes", "--postgres", url, "--events", "--item", "tasks/t1", "--format", "jsonl"])
            #expect(filtered.lines.count == 1 && filtered.stdout.contains("a task"), "\(filtered)")
            let page = try await EvstoreProcess.run([
                "dump", "notes", "--postgres", url, "--from", "1100", "--limit", "5", "--format", "jsonl",
            ])
            #expect(page.lines.count == 5 && page.lines[0].contains("\"seq\":1100"), "\(page)")
            let meta = try await EvstoreProcess.run(["dump", "notes", "--postgres", url, "--meta", "--format", "jsonl"])
            #expect(
                meta.status == 0 && meta.stdout.contains("\"key\":\"head\"") && meta.stdout.contains("1201"), "\(meta)")
            let items = try await EvstoreProcess.run(["dump", "notes", "--postgres", url, "--items"])
            #expect(items.status == 64 && items.stderr.contains("does not keep"), "\(items)")
            let missing = try await EvstoreProcess.run(["dump", "nothing-here", "--postgres", url, "--meta"])
            #expect(missing.status == 1 && missing.errorLines.count == 1, "\(missing)")

            let sound = try await EvstoreProcess.run(["verify", "notes", "--postgres", url, "--format", "jsonl"])
            #expect(
                sound.status == 0 && sound.stdout.contains("\"consistent\":true")
                    && sound.stdout.contains("\"events\":1201"), "\(sound)")
            // A digest that no longer matches its event (a damaged or forged row) is found.
            try await TestPostgres.withAdminClient(database) { client in
                try await client.query(
                    "UPDATE evstore_events SET digest = digest + 1 WHERE store = 'notes' AND seq = 1000")
            }
            let tampered = try await EvstoreProcess.run(["verify", "notes", "--postgres", url])
            #expect(tampered.status == 1 && tampered.stdout.contains("log digest at seq 1000"), "\(tampered)")
        }
    }

    @Test(
        "dump and verify find a store among several databases; another order is refused, a database twice is a usage error"
    )
    func dumpAndVerifyAStoreOfAPartitionedDeployment() async throws {
        try await withTemporaryDirectory(prefix: "server-store-partitions") { directory in
            let databases = try await TestPostgres.freshDatabases(2)
            let service = try SyncService(configuration: .init(backend: .postgres(partitions: databases)))
            defer { service.close() }
            let replica = try Store.open(at: directory.appending("replica"))
            defer { replica.close() }
            try await replica.append(
                (0..<20).map { .put("notes", id: "n\($0)", fields: ["title": .string("note \($0)")]) })
            for name in ["notes", "tasks", "journal"] {
                _ = try await service.push(
                    store: name, PushRequest(replica: replica.replicaID, events: try allEvents(of: replica)))
            }
            let urls = databases.map(TestPostgres.url(of:))
            for name in ["notes", "tasks", "journal"] {
                let dump = try await EvstoreProcess.run(
                    ["dump", name, "--postgres", urls[0], "--postgres", urls[1], "--events", "--format", "jsonl"])
                #expect(dump.status == 0 && dump.lines.count == 20, "\(dump)")
                let verify = try await EvstoreProcess.run([
                    "verify", name, "--postgres", urls[0], "--postgres", urls[1],
                ])
                #expect(verify.status == 0, "\(verify)")
            }
            let reversed = try await EvstoreProcess.run([
                "dump", "notes", "--postgres", urls[1], "--postgres", urls[0], "--meta",
            ])
            #expect(
                reversed.status == 1 && reversed.stderr.contains("in the order it was first used with"), "\(reversed)")
            let twice = try await EvstoreProcess.run([
                "dump", "notes", "--postgres", urls[0], "--postgres", urls[0], "--meta",
            ])
            #expect(twice.status == 64 && twice.stderr.contains("is given twice"), "\(twice)")
        }
    }
}
