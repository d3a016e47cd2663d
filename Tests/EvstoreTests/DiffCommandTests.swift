import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore diff`: two replicas that diverged while offline differ (exit 1) in exactly the fields
/// and events the test made on one side only; once they have exchanged their events they are
/// equal (exit 0).
@Suite("evstore diff")
struct DiffCommandTests {
    /// Two replicas with a shared start, then different writes on each side.
    struct Diverged {
        let pathA: String
        let pathB: String
        let onlyA: [Event]
        let onlyB: [Event]

        init(in directory: TemporaryDirectory) throws {
            pathA = directory.appending("a")
            pathB = directory.appending("b")
            let written = try withReplicas(pathA, pathB) { a, clockA, b, clockB in
                let shared = try a.append([
                    .put("notes", id: "n1", fields: ["title": "base", "content": "shared"]),
                    .put("notes", id: "n2", fields: ["title": "two"]),
                ])
                _ = try b.ingest(shared)
                clockA.advance(by: 50)
                clockB.advance(by: 60)
                let onlyA = try a.append([.patch("notes", id: "n1", fields: ["title": "changed on A"])])
                let onlyB = try b.append([
                    .put("notes", id: "n3", fields: ["title": "new on B"]),
                    .delete("notes", id: "n2"),
                ])
                return (a: onlyA, b: onlyB)
            }
            onlyA = written.a
            onlyB = written.b
        }

        /// Gives each replica the other's events.
        func exchange() throws {
            try withStore(at: pathA) { a in
                try withStore(at: pathB) { b in
                    _ = try a.ingest(try allEvents(b))
                    _ = try b.ingest(try allEvents(a))
                }
            }
        }
    }

    @Test("diverged replicas: exit 1, the differing fields and the events only in one")
    func divergedReplicas() async throws {
        try await withTemporaryDirectory(prefix: "evstore-diff") { directory in
            let replicas = try Diverged(in: directory)
            let result = try await EvstoreProcess.run(["diff", replicas.pathA, replicas.pathB, "--format", "jsonl"])
            #expect(result.status == 1, "\(result)")
            let lines = JSONLines.objects(result)
            let fields = lines.filter { JSONLines.string($0, "kind") == "field" }
            #expect(
                fields.allSatisfy {
                    JSONLines.keys($0) == ["a", "b", "collection", "field", "id", "in_a", "in_b", "kind"]
                })
            let described = fields.map {
                "\(JSONLines.string($0, "collection") ?? "")/\(JSONLines.string($0, "id") ?? "").\(JSONLines.string($0, "field") ?? "")"
                    + " \(JSONLines.canonical($0["a"])) | \(JSONLines.canonical($0["b"]))"
            }
            #expect(
                described == [
                    #"notes/n1.title "changed on A" | "base""#,
                    #"notes/n2.title "two" | null"#,
                    #"notes/n3.title null | "new on B""#,
                ], "\(result)")
            let n3 = try #require(fields.last)
            #expect(JSONLines.bool(n3, "in_a") == false && JSONLines.bool(n3, "in_b") == true)

            func ids(_ kind: String) -> [String] {
                lines.filter { JSONLines.string($0, "kind") == kind }.map {
                    let event = JSONLines.object($0, "event") ?? [:]
                    return "\(JSONLines.string(event, "origin") ?? "")/\(JSONLines.int(event, "seq") ?? -1)"
                }
            }
            #expect(ids("only-in-a") == replicas.onlyA.map { "\($0.id.origin)/\($0.id.sequence)" })
            #expect(ids("only-in-b") == replicas.onlyB.map { "\($0.id.origin)/\($0.id.sequence)" })
            let onlyB = lines.filter { JSONLines.string($0, "kind") == "only-in-b" }
            #expect(onlyB.map { JSONLines.string($0, "op") } == ["put", "delete"])
            #expect(onlyB.map { JSONLines.int($0, "seq") } == [3, 4], "positions in B's log")

            let table = try await EvstoreProcess.run(["diff", replicas.pathA, replicas.pathB, "--format", "table"])
            #expect(table.status == 1, "\(table)")
            #expect(table.stdout.contains("1 event only in A"), "\(table)")
            #expect(table.stdout.contains("2 events only in B"), "\(table)")
            let rows = try AlignedTable(table.stdout, columns: ["item", "field", "A", "B"]).rows
            #expect(rows.map { $0[0] } == ["notes/n1", "notes/n2", "notes/n3"], "\(table)")
            #expect(rows.first == ["notes/n1", "title", #""changed on A""#, #""base""#])
        }
    }

    @Test("after exchanging their events the replicas are equal: exit 0")
    func syncedReplicas() async throws {
        try await withTemporaryDirectory(prefix: "evstore-diff") { directory in
            let replicas = try Diverged(in: directory)
            try replicas.exchange()
            let result = try await EvstoreProcess.run(["diff", replicas.pathA, replicas.pathB, "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            let table = try await EvstoreProcess.run(["diff", replicas.pathB, replicas.pathA, "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.stdout.contains("✔ equal"), "\(table)")
            // The logs hold the events in different orders, yet the items are the same.
            let itemsA = try await EvstoreProcess.run(["dump", replicas.pathA, "--items", "--format", "jsonl"])
            let itemsB = try await EvstoreProcess.run(["dump", replicas.pathB, "--items", "--format", "jsonl"])
            #expect(!itemsA.stdout.isEmpty && itemsA.stdout == itemsB.stdout)
        }
    }

    @Test("two replicas that met a conflict converge: diff exits 0")
    func convergedConflict() async throws {
        try await withTemporaryDirectory(prefix: "evstore-diff") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["diff", fixture.path, fixture.otherPath, "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }
}
