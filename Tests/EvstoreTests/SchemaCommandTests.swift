import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// The tool on a store whose collections have schemas: `dump --meta` shows them, `explain` and
/// `replay` show each event upcast and as logged, `rebuild` and `verify` run the recorded steps,
/// and a store with upcasters in code is refused with a reason, unchanged.
@Suite("evstore on a store with collection schemas")
struct SchemaCommandTests {
    /// A store of notes written at schema version 1 (`title`, `priority` as text) and read at
    /// version 2 (`name`, `priority` a number), through declarative steps or through code.
    static func store(at path: String, inCode: Bool) async throws {
        var old = Store.Configuration()
        old.schemas = [CollectionSchema("notes", version: 1)]
        let writer = try Store.open(at: path + "-old", configuration: old)
        try await writer.put("notes", id: "n1", fields: ["title": "Groceries", "priority": "high"])
        let events = try allEvents(of: writer).map {
            var event = $0; event.seq = 0; return event
        }
        writer.close()
        var schema = CollectionSchema("notes", version: 2)
        if inCode {
            schema.upcast(from: 1) { $0.renameField("title", to: "name") }
        } else {
            schema.upcast(
                from: 1, [.renameField("title", to: "name"), .mapValues("priority", ["high": 2], otherwise: 1)])
        }
        var configuration = Store.Configuration()
        configuration.schemas = [schema]
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        _ = try await store.ingest(events)
        try await store.patch("notes", id: "n1", fields: ["done": true])
    }

    @Test("dump --meta, explain, replay, rebuild and verify read through the recorded steps")
    func declarativeSteps() async throws {
        try await withTemporaryDirectory(prefix: "evstore-schema") { directory in
            let path = directory.appending("store")
            try await SchemaCommandTests.store(at: path, inCode: false)

            let meta = try await EvstoreProcess.run(["dump", path, "--meta", "--format", "jsonl"])
            #expect(
                meta.status == 0 && meta.stdout.contains("\"schemas\"") && meta.stdout.contains("rename title → name"),
                "\(meta)")
            let text = try await EvstoreProcess.run(["dump", path, "--meta"])
            #expect(
                text.stdout.contains(
                    "schema notes v2 (1→2: rename title → name, map priority (1 values, otherwise 1))"),
                "\(text)")

            let explain = try await EvstoreProcess.run([
                "explain", path, "--item", "notes/n1", "--field", "name", "--format", "jsonl",
            ])
            #expect(explain.status == 0, "\(explain)")
            let write = try #require(JSONLines.objects(explain).first)
            #expect(JSONLines.string(write, "value") == "Groceries" && JSONLines.int(write, "schema") == 1)
            #expect(JSONLines.canonical(write["original"]).contains(#""title":"Groceries""#), "\(explain)")
            let table = try await EvstoreProcess.run(["explain", path, "--item", "notes/n1", "--format", "table"])
            #expect(table.stdout.contains("(upcast from schema version 1; logged as put notes/n1"), "\(table)")

            let replay = try await EvstoreProcess.run([
                "replay", path, "--item", "notes/n1", "--step", "--format", "jsonl",
            ])
            #expect(replay.status == 0, "\(replay)")
            let steps = JSONLines.objects(replay)
            #expect(steps.count == 2 && JSONLines.canonical(steps[0]["original"]).contains("title"), "\(replay)")
            #expect(JSONLines.canonical(steps[1]["original"]) == "null")

            let rebuild = try await EvstoreProcess.run(["rebuild", path])
            #expect(rebuild.status == 0, "\(rebuild)")
            let verify = try await EvstoreProcess.run(["verify", path])
            #expect(verify.status == 0, "\(verify)")
            let items = try await EvstoreProcess.run(["dump", path, "--items", "--format", "jsonl"])
            #expect(
                items.stdout.contains(#""name":"Groceries""#) && items.stdout.contains(#""priority":2"#), "\(items)")
        }
    }

    @Test("a store with upcasters in code: rebuild and verify refuse with the reason, the store is unchanged")
    func upcastersInCode() async throws {
        try await withTemporaryDirectory(prefix: "evstore-schema-code") { directory in
            let path = directory.appending("store")
            try await SchemaCommandTests.store(at: path, inCode: true)
            let before = try await EvstoreProcess.run(["dump", path, "--items", "--format", "jsonl"])
            for command in [["rebuild", path], ["verify", path]] {
                let result = try await EvstoreProcess.run(command)
                #expect(
                    result.status == 1 && result.stderr.contains("only the application"), "\(command[0]): \(result)")
            }
            let after = try await EvstoreProcess.run(["dump", path, "--items", "--format", "jsonl"])
            #expect(after.stdout == before.stdout && after.stdout.contains(#""name":"Groceries""#))
        }
    }
}
