import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore explain`: on a real conflict between two replicas (``MixedStore``: A and B both
/// change `notes/n1.content` without seeing each other; B's write is stamped later), every write
/// is listed and exactly one — B's — is marked as the winner, on both replicas.
@Suite("evstore explain")
struct ExplainCommandTests {
    static let writeKeys = [
        "beaten_by", "cleared", "collection", "event", "field", "hlc", "item", "op", "origin", "original", "outcome",
        "reason",
        "schema", "seq", "update", "value", "won",
    ]

    @Test("--field F --format jsonl: every write, exactly one with won:true, the later concurrent one")
    func conflictedField() async throws {
        try await withTemporaryDirectory(prefix: "evstore-explain") { directory in
            let fixture = try MixedStore(in: directory)
            for path in [fixture.path, fixture.otherPath] {
                let result = try await EvstoreProcess.run(
                    ["explain", path, "--item", "notes/n1", "--field", "content", "--format", "jsonl"])
                #expect(result.status == 0, "\(result)")
                let lines = JSONLines.objects(result)
                try #require(lines.count == 3, "the put and the two patches wrote content: \(result)")
                #expect(lines.allSatisfy { JSONLines.keys($0) == ExplainCommandTests.writeKeys })
                #expect(
                    lines.allSatisfy {
                        JSONLines.string($0, "field") == "content" && JSONLines.string($0, "item") == "n1"
                    })
                #expect(
                    lines.map { JSONLines.string($0, "value") } == ["hello world", "edited on A", "edited on B"],
                    "oldest stamp first")
                let winners = lines.filter { JSONLines.bool($0, "won") == true }
                try #require(winners.count == 1, "\(result)")
                let winner = winners[0]
                #expect(JSONLines.string(winner, "value") == "edited on B")
                #expect(JSONLines.string(winner, "origin") == MixedStore.replicaB.description)
                #expect(JSONLines.string(winner, "op") == "patch")
                #expect(JSONLines.string(winner, "outcome") == "won")
                #expect(JSONLines.canonical(winner["beaten_by"]) == "null")
                let fromA = try #require(lines.first { JSONLines.string($0, "value") == "edited on A" })
                #expect(JSONLines.bool(fromA, "won") == false)
                #expect(JSONLines.string(fromA, "origin") == MixedStore.replicaA.description)
                #expect(
                    JSONLines.string(fromA, "outcome") == "conflict",
                    "A's write lost a conflict, it was not overwritten knowingly")
                #expect(
                    JSONLines.object(fromA, "beaten_by").flatMap { JSONLines.string($0, "origin") }
                        == MixedStore.replicaB.description)
                #expect(lines.allSatisfy { !(JSONLines.string($0, "reason") ?? "").isEmpty })
                let stamps = lines.compactMap { JSONLines.string($0, "hlc").flatMap { UInt64($0) } }
                #expect(stamps == stamps.sorted() && stamps.count == 3)
            }
        }
    }

    @Test("without --field: each field of the item has exactly one winner, holding the item's value")
    func everyField() async throws {
        try await withTemporaryDirectory(prefix: "evstore-explain") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["explain", fixture.path, "--item", "n1", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            let fields = Set(lines.compactMap { JSONLines.string($0, "field") })
            #expect(fields == ["title", "content", "rank"])
            let expected = try #require(MixedStore.expectedItems["notes/n1"])
            for field in fields {
                let winners = lines.filter {
                    JSONLines.string($0, "field") == field && JSONLines.bool($0, "won") == true
                }
                #expect(winners.count == 1, "field \(field)")
                #expect(
                    JSONLines.canonical(winners.first?["value"]) == JSONLines.canonical(expected[field]),
                    "field \(field)")
            }
            let title = lines.filter { JSONLines.string($0, "field") == "title" }
            #expect(
                title.map { JSONLines.string($0, "outcome") } == ["overwritten", "won"],
                "a sequential edit is no conflict")
        }
    }

    @Test("a deleted item: the delete is the winning write and clears the field")
    func deletedItem() async throws {
        try await withTemporaryDirectory(prefix: "evstore-explain") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(
                ["explain", fixture.path, "--item", "notes/n2", "--field", "title", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            #expect(lines.map { JSONLines.string($0, "op") } == ["put", "delete"])
            let winners = lines.filter { JSONLines.bool($0, "won") == true }
            #expect(winners.count == 1)
            #expect(winners.first.flatMap { JSONLines.string($0, "op") } == "delete")
            #expect(winners.first.flatMap { JSONLines.bool($0, "cleared") } == true)
            #expect(lines.first.flatMap { JSONLines.string($0, "outcome") } == "cleared")
        }
    }

    @Test("--format table marks the winning write with ✔ and gives a reason under each write")
    func table() async throws {
        try await withTemporaryDirectory(prefix: "evstore-explain") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(
                ["explain", fixture.path, "--item", "notes/n1", "--field", "content", "--format", "table"])
            #expect(result.status == 0, "\(result)")
            let marked = result.lines.filter { $0.contains("✔") }
            #expect(marked.count == 1, "\(result)")
            #expect(marked.first?.contains(#""edited on B""#) == true, "\(result)")
            #expect(result.lines.filter { $0.contains("└ ") }.count == 3, "\(result)")
            #expect(result.lines.first?.contains(#"notes/n1 · content = "edited on B""#) == true, "\(result)")
        }
    }

    @Test("a field never written: exit 1 and one line naming it")
    func unknownField() async throws {
        try await withTemporaryDirectory(prefix: "evstore-explain") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(
                ["explain", fixture.path, "--item", "notes/n1", "--field", "nope", "--format", "jsonl"])
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.errorLines.count == 1 && result.stderr.contains("nope"), "\(result)")
        }
    }

    @Test("an add-wins set and a counter: the tool reads the recorded policies and lists every update")
    func mergedFields() async throws {
        try await withTemporaryDirectory(prefix: "evstore-explain") { directory in
            var notes = CollectionSchema("notes")
            notes.merge("tags", as: .addWinsSet)
            notes.merge("views", as: .counter)
            var configuration = Store.Configuration()
            configuration.schemas = [notes]
            let path = directory.appending("store")
            let store = try Store.open(at: path, configuration: configuration)
            try await store.append([
                .put("notes", id: "n1", fields: ["title": "t", "tags": ["draft", "work"], "views": 2])
            ])
            try await store.append([.edit("notes", id: "n1", ["tags": .remove(["draft"]), "views": .increment(by: 3)])])
            store.close()

            let tags = try await EvstoreProcess.run([
                "explain", path, "--item", "notes/n1", "--field", "tags", "--format", "jsonl",
            ])
            #expect(tags.status == 0, "\(tags)")
            let lines = JSONLines.objects(tags)
            #expect(
                lines.count == 2 && lines.allSatisfy { JSONLines.keys($0) == ExplainCommandTests.writeKeys }, "\(tags)")
            #expect(lines.allSatisfy { JSONLines.string($0, "outcome") == "merged" })
            #expect(JSONLines.canonical(lines.first?["update"]) == #"{"add":["draft","work"]}"#, "\(tags)")
            #expect(JSONLines.string(lines[1], "reason")?.hasPrefix(#"removes "draft""#) == true, "\(tags)")

            let views = try await EvstoreProcess.run(
                ["explain", path, "--item", "notes/n1", "--field", "views", "--format", "table"])
            #expect(views.status == 0, "\(views)")
            #expect(views.lines.first?.contains("notes/n1 · views = 5") == true, "\(views)")
            #expect(views.lines.filter { $0.contains("✔") }.count == 2, "both increments count: \(views)")
            #expect(
                views.lines.contains { $0.contains("+3") } && views.lines.contains { $0.contains("counted") },
                "\(views)")

            let meta = try await EvstoreProcess.run(["dump", path, "--meta", "--format", "jsonl"])
            #expect(meta.stdout.contains(#""merge":{"tags":"add-wins-set","views":"counter"}"#), "\(meta)")
            let text = try await EvstoreProcess.run(["dump", path, "--meta"])
            #expect(text.stdout.contains("schema notes v0 merging tags add-wins-set, views counter"), "\(text)")
        }
    }
}
