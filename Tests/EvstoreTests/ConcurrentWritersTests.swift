import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Two processes writing one store at once: LMDB serializes their commits, and each process
/// computes search merge steps between commits from its own snapshots, which the other's
/// commits make stale; a rebuild in one applies what the other appends meanwhile. No write is
/// lost and the index stays consistent.
@Suite("two processes writing one store")
struct ConcurrentWritersTests {
    @Test(
        "this process appends searchable notes while `evstore import` appends: nothing lost, verify clean",
        .timeLimit(.minutes(10)))
    func appendWhileAnotherProcessImports() async throws {
        try await withTemporaryDirectory(prefix: "evstore-two-writers") { directory in
            let lineCount = 20_000
            let started = try ConcurrentAccessTests.startImport(into: directory, count: lineCount)
            // Opened here and at once, so that the appends start while the import runs (an open
            // on a thread of its own resumed this task seconds later on a loaded machine, after
            // the import had ended).
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
                // Until the other process has committed in between at least once (on a loaded
                // machine its start alone can outlast 40,000 notes), or has ended.
                if written > 40_000 && overlapped > 0 { break }
            }
            let imported = await started.importer.wait(timeout: .seconds(120))
            #expect(imported.status == 0, "\(imported)")
            #expect(overlapped >= 1, "the other process committed between this one's commits")

            #expect(try store.count(in: "notes") == written)
            #expect(try store.count(in: "bulk") == lineCount)
            #expect(try store.search(SearchQuery("note", limit: 1)).isEmpty == false)
            #expect(try store.searchPage(SearchQuery("note", limit: 1)).total == written)
            #expect(try store.searchPage(SearchQuery("bulk item", limit: 1)).total == lineCount)
            // A verify of tens of thousands of events: on a thread of its own, not the pool's.
            let report = try await offPool { try store.verify() }
            #expect(report.isConsistent, "\(report.problems.prefix(3))")
            store.close()
            let verify = try await EvstoreProcess.run(
                ["verify", started.path, "--format", "jsonl"], timeout: .seconds(600))
            #expect(verify.status == 0, "\(verify)")
        }
    }

    @Test(
        "`evstore import` appends during this process's rebuild in passes: every append is in the rebuilt projections",
        .timeLimit(.minutes(10)))
    func importDuringARebuild() async throws {
        try await withTemporaryDirectory(prefix: "evstore-rebuild-and-import") { directory in
            let path = directory.appending("store")
            let lines = (0..<2_000).map {
                #"{"collection": "bulk", "id": "r\#($0)", "op": "put", "fields": {"title": "Bulk item \#($0)"}}"#
            }
            let file = directory.appending("during.jsonl")
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
            // Few records held and small chunks: the rebuild goes in passes, and the import runs
            // after its first chunk, between two of its transactions.
            var configuration = Store.Configuration()
            configuration.replayRecordLimit = 400
            configuration.rebuildChunkEvents = 500
            let store = try Store.open(at: path, configuration: configuration)
            defer { store.close() }
            for batch in 0..<6 {
                try await store.append(
                    (0..<500).map { index in
                        .put("notes", id: "n\(batch * 500 + index)", fields: ["title": .string("note \(index % 7)")])
                    })
            }
            let before = try store.head()
            let status = Mutex<Int32?>(nil)
            try await store.rebuildProjections { _ in
                guard status.withLock({ $0 == nil }) else { return }
                // Called on the writer thread outside any transaction: the other process commits.
                let child = try? SpawnedProcess(
                    executable: EvstoreProcess.executablePath, arguments: ["import", path, file])
                status.withLock { $0 = child?.waitUntilExit().status ?? -1 }
            }
            #expect(status.withLock { $0 } == 0)
            #expect(try store.head() == before + 2_000, "the import committed during the rebuild")
            #expect(try store.count(in: "notes") == 3_000)
            #expect(try store.count(in: "bulk") == 2_000)
            #expect(try store.searchPage(SearchQuery("note", limit: 1)).total == 3_000)
            #expect(try store.searchPage(SearchQuery("bulk item", limit: 1)).total == 2_000)
            let report = try await offPool { try store.verify() }
            #expect(report.isConsistent, "\(report.problems.prefix(3))")
        }
    }
}
