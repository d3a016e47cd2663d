import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// Two processes writing one store at once: LMDB serializes their commits, and each process
/// computes search merge steps between commits from its own snapshots, which the other's
/// commits make stale. No write is lost and the index stays consistent.
@Suite("two processes writing one store")
struct ConcurrentWritersTests {
    @Test(
        "this process appends searchable notes while `evstore import` appends: nothing lost, verify clean",
        .timeLimit(.minutes(10)))
    func appendWhileAnotherProcessImports() async throws {
        try await withTemporaryDirectory(prefix: "evstore-two-writers") { directory in
            let lineCount = 20_000
            let started = try ConcurrentAccessTests.startImport(into: directory, count: lineCount)
            let store = try Store.open(at: started.path)
            var random = SeededGenerator(seed: 3)
            var written = 0
            var overlapped = 0
            // Notes of a small vocabulary, so the segments share terms and merges run in both
            // processes; at least 40 batches, and on while the import runs.
            while started.importer.isRunning || written < 40 * 25 {
                let before = try store.head()
                try await store.append(
                    (0..<25).map { index in
                        let words = (0..<6).map { _ in "word\(random.next() % 50)" }.joined(separator: " ")
                        return .put("notes", id: "n\(written + index)", fields: ["title": .string("note \(words)")])
                    })
                written += 25
                if try store.head() > before + 25 { overlapped += 1 }
                if written > 40_000 { break }
            }
            let imported = await started.importer.wait(timeout: .seconds(120))
            #expect(imported.status == 0, "\(imported)")
            #expect(overlapped >= 1, "the other process committed between this one's commits")

            #expect(try store.count(in: "notes") == written)
            #expect(try store.count(in: "bulk") == lineCount)
            #expect(try store.search(SearchQuery("note", limit: 1)).isEmpty == false)
            #expect(try store.searchPage(SearchQuery("note", limit: 1)).total == written)
            #expect(try store.searchPage(SearchQuery("bulk item", limit: 1)).total == lineCount)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems.prefix(3))")
            store.close()
            let verify = try await EvstoreProcess.run(
                ["verify", started.path, "--format", "jsonl"], timeout: .seconds(600))
            #expect(verify.status == 0, "\(verify)")
        }
    }
}
