import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import EventStore

/// Tokenizing a transaction's new documents on another thread (``DocumentTokenizer``) writes the
/// same search index as tokenizing them on the writer, and a request rolled back inside a group
/// commit takes its documents with it.
struct DocumentTokenizerTests {
    typealias F = ProjectionFixtures

    /// The search index and items of a new store that ingested `events` in `batches`, with
    /// documents handed to the tokenizer thread `chunk` at a time.
    static func projections(_ events: [Event], batches: [Int], chunk: Int) async throws -> [String: [[UInt8]]] {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = F.configuration()
        configuration.tokenizerChunk = chunk
        let store = try Store.open(at: directory.path, configuration: configuration)
        defer { store.close() }
        var start = 0
        for batch in batches.cycled(until: events.count) {
            let slice = Array(events[start..<min(start + batch, events.count)])
            _ = try await store.ingest(slice)
            start += slice.count
        }
        let report = try store.verify()
        #expect(report.isConsistent, "\(report.problems)")
        var bytes: [String: [[UInt8]]] = [:]
        for name in ["items", "search_documents", "search_segments", "state"] {
            bytes[name] = try F.entries(store, name)
        }
        return bytes
    }

    /// Every document on the tokenizer thread, the default chunks, and none: the same bytes in
    /// every search database, for histories with English and Korean text and tags, items
    /// replaced several times within one transaction, and transactions of 1 to 150 events.
    @Test(arguments: UInt64(1)...6)
    func theIndexIsTheSameWhereverDocumentsWereTokenized(seed: UInt64) async throws {
        let events = CoreFixtures.randomHistory(
            seed: seed, origins: 3, events: 400, values: .byField, collections: ["notes", "tasks"],
            items: (0..<40).map { "item-\($0)" })
        let batches = [150, 1, 37, 16, 15, 90, 2]
        let onWriter = try await Self.projections(events, batches: batches, chunk: Int.max)
        #expect(onWriter["search_segments"]?.isEmpty == false)
        for chunk in [1, 16] {
            let onThread = try await Self.projections(events, batches: batches, chunk: chunk)
            for (name, entries) in onWriter {
                #expect(onThread[name] == entries, "seed \(seed), chunk \(chunk): \(name) differs")
            }
        }
    }

    /// Refuses every event of an item whose id starts with `poison`, which fails the request that
    /// holds it after the request's earlier documents went to the tokenizer thread.
    struct Refuses: Projection {
        let name = "refuses"
        let version = 1
        let databases = ["seen"]
        func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
            if change.event.item.hasPrefix("poison") { throw EventStoreError(.projection, "refused") }
        }
    }

    /// 16 threads append batches of searchable notes, every third batch ending with a note that a
    /// projection refuses. Group commit rolls each refused batch back alone, inside commits that
    /// keep the others, after the batch's documents were handed to the tokenizer thread: one at a
    /// time (every request finds the tokenizer started), three at a time (a request that starts
    /// it may be the one rolled back, which takes the tokenizer with it), sixteen (the default).
    /// No refused word is found, every kept note is, and verify agrees with a rebuild.
    @Test(arguments: [1, 3, 16])
    func aRequestRolledBackInAGroupTakesItsDocumentsWithIt(chunk: Int) throws {
        var configuration = Store.Configuration()
        configuration.tokenizerChunk = chunk
        configuration.projections = [Refuses()]
        try withTemporaryStore(configuration: configuration) { store in
            let threads = 16
            let batches = 12
            let first = try store.statistics().lastTransactionID
            let outcomes = Mutex((kept: 0, refused: 0, unexpected: [String]()))
            let group = DispatchGroup()
            for thread in 0..<threads {
                group.enter()
                Thread {
                    defer { group.leave() }
                    for batch in 0..<batches {
                        let refused = batch % 3 == 2
                        var changes = (0..<4).map { note in
                            Change.put(
                                "notes", id: "t\(thread)-b\(batch)-n\(note)",
                                fields: ["title": .string(refused ? "rolledback words" : "kept words \(thread)")])
                        }
                        if refused {
                            changes.append(
                                .put("notes", id: "poison-\(thread)-\(batch)", fields: ["title": "rolledback"]))
                        }
                        do {
                            try store.append(changes)
                            outcomes.withLock { $0.kept += 1 }
                        } catch let error as EventStoreError where refused && "\(error)".contains("refused") {
                            outcomes.withLock { $0.refused += 1 }
                        } catch {
                            outcomes.withLock { $0.unexpected.append("\(error)") }
                        }
                    }
                }.start()
            }
            group.wait()
            let (kept, refused, unexpected) = outcomes.withLock { ($0.kept, $0.refused, $0.unexpected) }
            #expect(unexpected.isEmpty, "\(unexpected)")
            #expect(refused == threads * batches / 3)
            #expect(kept == threads * batches - refused)
            let commits = try store.statistics().lastTransactionID - first
            #expect(commits < kept + refused, "the requests shared commits: \(commits) for \(kept + refused)")

            #expect(try store.search(SearchQuery("rolledback", limit: 1_000)).isEmpty)
            #expect(try store.search(SearchQuery("kept", limit: 1_000)).count == kept * 4)
            #expect(try store.count(in: "notes") == kept * 4)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
    }
}

extension Array where Element == Int {
    /// The sizes over and over, as many as needed to cover `total`.
    fileprivate func cycled(until total: Int) -> [Int] {
        var sizes: [Int] = []
        var covered = 0
        while covered < total {
            let size = self[sizes.count % count]
            sizes.append(size)
            covered += size
        }
        return sizes
    }
}
