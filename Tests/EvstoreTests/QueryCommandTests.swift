import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore index` and `evstore query`: declaring an index on an existing store, then filtered,
/// sorted, paged queries and counts in both formats, and clear failures.
@Suite("evstore index and query")
struct QueryCommandTests {
    /// A store with 30 tasks and no declared index.
    static func makeStore(in directory: TemporaryDirectory) async throws -> String {
        let path = directory.appending("store")
        let store = try Store.open(at: path)
        defer { store.close() }
        _ = try await store.append(
            (0..<30).map { number in
                var fields: [String: Value] = ["title": .string("task \(number)"), "done": .bool(number % 3 == 0)]
                if number % 5 != 0 { fields["due"] = .int(Int64(100 + (number * 7) % 30)) }
                return .put("tasks", id: String(format: "t%02d", number), fields: fields)
            })
        return path
    }

    /// The expected ids of open tasks by due date (missing first), then id.
    static func openByDue(_ path: String) throws -> [String] {
        var configuration = Store.Configuration()
        configuration.readOnly = true
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        let items = try store.read { try $0.items(in: "tasks", limit: 100).items }
        return items.filter { $0["done"] == false }.sorted { lhs, rhs in
            let (a, b) = (lhs["due"]?.intValue ?? Int64.min, rhs["due"]?.intValue ?? Int64.min)
            return a != b ? a < b : lhs.id < rhs.id
        }.map(\.id)
    }

    @Test(
        "index declares and builds; query pages through jsonl with a final cursor record; count; dump --meta lists it")
    func indexThenQuery() async throws {
        try await withTemporaryDirectory(prefix: "evstore-query") { directory in
            let path = try await Self.makeStore(in: directory)

            let refused = try await EvstoreProcess.run([
                "query", path, "--collection", "tasks", "--where", "done == false", "--sort", "due",
            ])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stderr.contains("tasks(done,due)"), "\(refused)")
            #expect(refused.stderr.contains("evstore index"), "\(refused)")

            let declared = try await EvstoreProcess.run([
                "index", path, "--collection", "tasks", "--fields", "done,due",
            ])
            #expect(declared.status == 0, "\(declared)")
            #expect(declared.stdout.contains("index tasks(done,due) is declared (30 items)"), "\(declared)")

            var ids: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                var arguments = [
                    "query", path, "--collection", "tasks", "--where", "done == false", "--sort", "due", "--limit", "6",
                    "--format", "jsonl",
                ]
                if let cursor { arguments += ["--after", cursor] }
                let result = try await EvstoreProcess.run(arguments)
                #expect(result.status == 0, "\(result)")
                let lines = JSONLines.objects(result)
                cursor = lines.last.flatMap { JSONLines.string($0, "cursor") }
                let items = lines.filter { $0["cursor"] == nil }
                #expect(items.allSatisfy { JSONLines.string($0, "collection") == "tasks" })
                ids += items.compactMap { JSONLines.string($0, "id") }
                pages += 1
            } while cursor != nil && pages < 10
            #expect(ids == (try Self.openByDue(path)))
            #expect(pages == 4)

            let count = try await EvstoreProcess.run([
                "query", path, "--collection", "tasks", "--where", "done = false", "--count", "--format", "jsonl",
            ])
            #expect(JSONLines.objects(count).first.flatMap { JSONLines.int($0, "count") } == ids.count, "\(count)")

            let table = try await EvstoreProcess.run([
                "query", path, "--collection", "tasks", "--where", "done == false", "--where", "due between [105, 115]",
                "--sort", "due:desc", "--limit", "2", "--format", "table",
            ])
            #expect(table.status == 0, "\(table)")
            #expect(table.stdout.contains("next page: --after q1."), "\(table)")

            let meta = try await EvstoreProcess.run(["dump", path, "--meta", "--format", "jsonl"])
            let record = try #require(
                JSONLines.objects(meta).first { JSONLines.string($0, "key") == "store.configuration" })
            #expect(JSONLines.string(record, "text")?.hasSuffix("; indexes tasks(done,due)") == true, "\(meta)")
            let indexes = (JSONLines.object(record, "value")?["indexes"] as? [[String: Any]])?.compactMap {
                JSONLines.string($0, "name")
            }
            #expect(indexes == ["tasks(done,due)"])

            let verify = try await EvstoreProcess.run(["verify", path])
            #expect(verify.status == 0, "\(verify)")
        }
    }

    @Test("bad filters, sorts and cursors are usage errors or clear failures")
    func badInput() async throws {
        try await withTemporaryDirectory(prefix: "evstore-query") { directory in
            let path = try await Self.makeStore(in: directory)
            _ = try await EvstoreProcess.run(["index", path, "--collection", "tasks", "--fields", "due"])
            for (arguments, status, message) in [
                (["--where", "due"], Int32(64), "expected FIELD OP VALUE"),
                (["--where", "due ~ 3"], 64, "unknown operator"),
                (["--where", "due in 3"], 64, "JSON array"),
                (["--sort", "due:sideways"], 64, "asc or desc"),
                (["--sort", ":desc"], 64, "no field"),
                (["--sort", "due:"], 64, "asc or desc"),
                (["--sort", "due", "--after", "q1.bogus"], 1, "cursor"),
                (["--sort", "title"], 1, "tasks(title)"),
            ] as [([String], Int32, String)] {
                let result = try await EvstoreProcess.run(["query", path, "--collection", "tasks"] + arguments)
                #expect(result.status == status, "\(result)")
                #expect(result.stderr.contains(message), "\(result)")
            }
            let scan = try await EvstoreProcess.run([
                "query", path, "--collection", "tasks", "--sort", "title", "--scan", "--limit", "1", "--format",
                "jsonl",
            ])
            #expect(JSONLines.objects(scan).first.flatMap { JSONLines.string($0, "id") } == "t00", "\(scan)")
            let missing = try await EvstoreProcess.run([
                "query", path, "--collection", "tasks", "--where", "due is-missing", "--count", "--format", "table",
            ])
            #expect(missing.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "6", "\(missing)")
            // The largest limit is "all".
            let all = try await EvstoreProcess.run([
                "query", path, "--collection", "tasks", "--sort", "due", "--limit", String(Int.max), "--format",
                "jsonl",
            ])
            #expect(all.status == 0, "\(all)")
            #expect(JSONLines.objects(all).count >= 20, "\(all)")
        }
    }
}
