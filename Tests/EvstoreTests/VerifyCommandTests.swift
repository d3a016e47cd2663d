import EventStore
import EventStoreTestSupport
import Foundation
import LMDB
import Testing

/// `evstore verify` and `evstore rebuild`: a clean store passes; a store whose item projection
/// was damaged behind the engine's back (one item's value overwritten, through LMDB directly)
/// fails and names the item; a rebuild repairs it.
@Suite("evstore verify")
struct VerifyCommandTests {
    /// Overwrites the stored value of `target` with the stored value of `source` in the active
    /// generation's items database — bytes that decode fine but do not match the log.
    /// Gives `target` the merged state of `source`. With `keepingDocument`, the target keeps its
    /// own search doc id (the last 4 bytes of an indexed item's entry), so only its state is wrong.
    static func overwriteItem(
        at path: String, _ target: (String, String), with source: (String, String), keepingDocument: Bool = true
    ) throws {
        let environment = try Environment.open(path: path)
        try environment.write { tx in
            let meta = try tx.openDatabase(named: "meta", options: [])
            let generationBytes = try #require(try tx.value(forKey: Array("store.generation".utf8), in: meta))
            try #require(generationBytes.count == 8)
            let generation = generationBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let items = try tx.openDatabase(named: "g\(generation).items", options: [])
            func key(_ item: (String, String)) -> [UInt8] { Array(item.0.utf8) + [0] + Array(item.1.utf8) }
            let value = try #require(try tx.value(forKey: key(source), in: items))
            let old = try #require(try tx.value(forKey: key(target), in: items))
            try #require(old != value)
            try tx.put(keepingDocument ? value.dropLast(4) + old.suffix(4) : value, forKey: key(target), in: items)
        }
    }

    @Test("a clean store passes (exit 0), in both formats")
    func cleanStore() async throws {
        try await withTemporaryDirectory(prefix: "evstore-verify") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["verify", fixture.path, "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            let summary = try #require(lines.last)
            #expect(lines.count == 1, "no problem lines: \(result)")
            #expect(JSONLines.bool(summary, "consistent") == true)
            #expect(JSONLines.int(summary, "problems") == 0)
            #expect(JSONLines.int(summary, "events") == 8)
            #expect((JSONLines.int(summary, "entries") ?? 0) > 0)
            let table = try await EvstoreProcess.run(["verify", fixture.path, "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.stdout.contains("ok"), "\(table)")
        }
    }

    @Test("an item overwritten behind the engine's back fails (exit 1, names the item); rebuild repairs it")
    func corruptedItem() async throws {
        try await withTemporaryDirectory(prefix: "evstore-verify") { directory in
            let fixture = try MixedStore(in: directory)
            let before = try await EvstoreProcess.run(["dump", fixture.path, "--items", "--format", "jsonl"])
            try VerifyCommandTests.overwriteItem(at: fixture.path, ("notes", "n1"), with: ("notes", "n3"))

            let result = try await EvstoreProcess.run(["verify", fixture.path, "--format", "jsonl"])
            #expect(result.status == 1, "\(result)")
            let lines = JSONLines.objects(result)
            let problems = lines.filter { $0["kind"] != nil }
            #expect(problems.count == 1, "\(result)")
            let problem = try #require(problems.first)
            #expect(JSONLines.keys(problem) == ["database", "detail", "key", "kind"])
            #expect(JSONLines.string(problem, "key") == "notes/n1")
            #expect(JSONLines.string(problem, "kind") == "different")
            #expect(JSONLines.string(problem, "database")?.hasSuffix("items") == true)
            let summary = try #require(lines.last)
            #expect(JSONLines.bool(summary, "consistent") == false)
            #expect(JSONLines.int(summary, "problems") == 1)

            let table = try await EvstoreProcess.run(["verify", fixture.path, "--format", "table"])
            #expect(table.status == 1, "\(table)")
            #expect(table.stdout.contains("FAILED") && table.stdout.contains("notes/n1"), "\(table)")

            let rebuild = try await EvstoreProcess.run(["rebuild", fixture.path])
            #expect(rebuild.status == 0, "\(rebuild)")
            let again = try await EvstoreProcess.run(["verify", fixture.path, "--format", "jsonl"])
            #expect(again.status == 0, "\(again)")
            let after = try await EvstoreProcess.run(["dump", fixture.path, "--items", "--format", "jsonl"])
            #expect(after.stdout == before.stdout, "the rebuild restores the items from the log")
        }
    }

    @Test("an empty store (created, never written) passes")
    func emptyStore() async throws {
        try await withTemporaryDirectory(prefix: "evstore-verify") { directory in
            let path = directory.appending("store")
            try withStore(at: path) { _ in }
            let result = try await EvstoreProcess.run(["verify", path, "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let summary = JSONLines.objects(result).last
            #expect(summary.flatMap { JSONLines.bool($0, "consistent") } == true, "\(result)")
            #expect(summary.flatMap { JSONLines.int($0, "events") } == 0)
        }
    }
}
