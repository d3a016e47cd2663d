import EventStore
import EventStoreTestSupport
import Foundation
import LMDB
import Testing

/// The tool uses the configuration a store records: `evstore verify` and `evstore rebuild` on a
/// store written with custom search fields and a custom projection the tool does not have.
@Suite("evstore and the store's own configuration")
struct ConfigurationCommandTests {
    /// The application's configuration: tasks searchable by `title` and `notes`, a custom tag
    /// field, and the projection (the shared test fixture ``TagCounts``, at version 3).
    static func application() -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.search.collections["tasks"] = [.init(name: "title", weight: 4), .init(name: "notes", weight: 1)]
        configuration.search.defaultFields = [.init(name: "title", weight: 2), .init(name: "body", weight: 1)]
        configuration.search.tagField = "labels"
        configuration.projections = [TagCounts(version: 3)]
        return configuration
    }

    /// Writes a store with ``application()`` and closes it.
    static func writeStore(at path: String) async throws {
        let store = try Store.open(at: path, configuration: application())
        defer { store.close() }
        try await store.put("tasks", id: "t1", fields: ["title": "Groceries", "notes": "oat milk", "tags": ["home"]])
        try await store.put("tasks", id: "t2", fields: ["title": "Milk the budget", "content": "post office"])
        try await store.put(
            "notes", id: "n1",
            fields: ["title": "Sync design", "body": "milk and cookies", "labels": ["work"], "tags": ["work"]])
        try await store.put("notes", id: "n2", fields: ["title": "Review", "content": "milk"])
        try await store.put("notes", id: "n3", fields: ["title": "Plan", "tags": ["work", "home"]])
    }

    static func searches(_ path: String) async throws -> [String] {
        var outputs: [String] = []
        for arguments in [["milk"], ["milk", "--collection", "tasks"], ["cookies"], ["sync", "--tag", "work"]] {
            let result = try await EvstoreProcess.run(["search", path] + arguments + ["--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            outputs.append(result.stdout)
        }
        return outputs
    }

    @Test("verify and rebuild use the recorded search fields: no problems, the same search results")
    func customSearchFields() async throws {
        try await withTemporaryDirectory(prefix: "evstore-configuration") { directory in
            let path = directory.appending("store")
            try await Self.writeStore(at: path)

            let before = try await Self.searches(path)
            #expect(
                JSONLines.objects(before[0]).count == 3,
                "milk: t1 (notes), t2 (title), n1 (body); not n2 (content is not searchable)")
            #expect(before[2].contains("\"n1\""), "cookies is in n1's body")
            #expect(before[3].contains("\"n1\""), "tag filters use the recorded tag field")

            let verify = try await EvstoreProcess.run(["verify", path, "--format", "jsonl"])
            #expect(verify.status == 0, "\(verify)")
            let summary = try #require(JSONLines.objects(verify).last)
            #expect(JSONLines.int(summary, "problems") == 0, "\(verify)")

            let rebuild = try await EvstoreProcess.run(["rebuild", path])
            #expect(rebuild.status == 0, "\(rebuild)")
            #expect(try await Self.searches(path) == before, "the rebuild indexes the recorded fields")
            let again = try await EvstoreProcess.run(["verify", path, "--format", "jsonl"])
            #expect(again.status == 0, "\(again)")

            // The application opens the rebuilt store as before: same configuration, same results.
            let store = try Store.open(at: path, configuration: Self.application())
            #expect(try store.search("cookies").map(\.item.id) == ["n1"])
            store.close()
        }
    }

    @Test("a custom projection the tool lacks is reported as skipped, and the application's next open restores it")
    func skippedProjection() async throws {
        try await withTemporaryDirectory(prefix: "evstore-configuration") { directory in
            let path = directory.appending("store")
            try await Self.writeStore(at: path)
            let expected = try {
                let store = try Store.open(at: path, configuration: Self.application())
                defer { store.close() }
                return try TagCounts.stored(store)
            }()
            #expect(expected == ["home": 2, "work": 2])

            let verify = try await EvstoreProcess.run(["verify", path, "--format", "jsonl"])
            #expect(verify.status == 0, "a projection the tool cannot run is not a problem: \(verify)")
            let summary = try #require(JSONLines.objects(verify).last)
            #expect(summary["skipped"] as? [String] == ["tag-counts"], "\(verify)")
            let table = try await EvstoreProcess.run(["verify", path, "--format", "table"])
            #expect(table.stdout.contains("skipped custom projection tag-counts (version 3)"), "\(table)")

            let rebuild = try await EvstoreProcess.run(["rebuild", path])
            #expect(rebuild.status == 0, "\(rebuild)")
            #expect(
                rebuild.stdout.contains("skipped custom projection tag-counts (version 3): not registered in evstore"),
                "\(rebuild)")
            #expect(rebuild.stdout.contains("the application rebuilds it when it next opens the store"), "\(rebuild)")

            let dump = try await EvstoreProcess.run(["dump", path, "--meta", "--format", "jsonl"])
            let record = try #require(
                JSONLines.objects(dump).first { JSONLines.string($0, "key") == "store.configuration" })
            #expect(JSONLines.string(record, "text")?.contains("tag-counts v3 (stale)") == true, "\(dump)")

            let store = try Store.open(at: path, configuration: Self.application())
            defer { store.close() }
            #expect(try TagCounts.stored(store) == expected)
            #expect(try store.read { try $0.configurationRecord() }?.projections.first?.isStale == false)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test(
        "a store made before records existed: the tool says it uses the default fields, until the application records its own"
    )
    func storeWithoutARecord() async throws {
        try await withTemporaryDirectory(prefix: "evstore-configuration") { directory in
            let path = directory.appending("store")
            try await Self.writeStore(at: path)
            do {
                let environment = try Environment.open(path: path)
                try environment.write { tx in
                    let meta = try tx.openDatabase(named: "meta", options: [])
                    #expect(try tx.delete(Array("store.configuration".utf8), in: meta))
                }
            }
            let before = try await EvstoreProcess.run(["search", path, "cookies", "--format", "jsonl"])
            #expect(before.status == 0, "\(before)")
            #expect(before.stderr.contains("records no configuration"), "\(before)")
            // A tool that writes would index with the default fields for good: it is refused.
            for arguments in [["rebuild", path], ["index", path, "--collection", "notes", "--fields", "title"]] {
                let refused = try await EvstoreProcess.run(arguments)
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("open it with the application once"), "\(refused)")
            }
            let imported = try await EvstoreProcess.run(
                ["import", path, "-"],
                stdin: Data(#"{"collection": "notes", "id": "n9", "op": "put", "fields": {"title": "x"}}"#.utf8))
            #expect(imported.status == 1, "\(imported)")

            let store = try Store.open(at: path, configuration: Self.application())
            #expect(try store.read { try $0.configurationRecord() }?.search == Self.application().search.canonical)
            store.close()
            let after = try await EvstoreProcess.run(["verify", path, "--format", "jsonl"])
            #expect(after.status == 0, "\(after)")
            #expect(after.stderr.isEmpty, "\(after)")
        }
    }

    /// The custom projection a tool cannot run is marked stale by the tool's first commit that
    /// changes the log or rebuilds, not by its open: declaring an index, or an import refused
    /// for a bad line, leaves it as it was (no rebuild at the application's next open).
    @Test("a tool marks the custom projections it cannot run stale only when it changes the log or rebuilds")
    func staleOnlyWhenTheLogChanges() async throws {
        try await withTemporaryDirectory(prefix: "evstore-configuration") { directory in
            let path = directory.appending("store")
            try await Self.writeStore(at: path)
            func stale() throws -> Bool {
                var configuration = Store.Configuration()
                configuration.readOnly = true
                configuration.searchChange = .useStored
                let store = try Store.open(at: path, configuration: configuration)
                defer { store.close() }
                let record = try #require(try store.read { try $0.configurationRecord() })
                return try #require(record.projections.first { $0.name == TagCounts().name }).isStale
            }
            #expect(try !stale())
            let index = try await EvstoreProcess.run(["index", path, "--collection", "tasks", "--fields", "title"])
            #expect(index.status == 0, "\(index)")
            let bad = try await EvstoreProcess.run(
                ["import", path, "-"], stdin: Data(#"{"collection": "", "id": "x", "op": "put", "fields": {}}"#.utf8))
            #expect(bad.status == 1, "\(bad)")
            #expect(try !stale(), "neither the index nor a refused import touches the projection")
            let good = try await EvstoreProcess.run(
                ["import", path, "-"],
                stdin: Data(#"{"collection": "notes", "id": "n9", "op": "put", "fields": {"title": "x"}}"#.utf8))
            #expect(good.status == 0, "\(good)")
            #expect(try stale(), "an import the projection did not see")
        }
    }
}
