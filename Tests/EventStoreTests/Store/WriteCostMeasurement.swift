import Foundation
import LMDB
import Testing

@testable import EventStore
import EventStoreTestSupport

/// Prints what the write path writes (not a check: it measures, it does not judge), with
/// `EVSTORE_MEASURE=1 swift test --skip-build --filter WriteCostMeasurement`:
/// - 2,000 events, one durable commit each, into a new store without a search index: the
///   process's `wchar` per commit, and which databases each commit dirtied (a database whose
///   root page moved);
/// - 32 threads appending 50 events each, one durable `append` at a time: events per commit
///   (LMDB's transaction ids) and bytes per event;
/// - 1,000-event commits into a store of 30,000 events: bytes per event.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["EVSTORE_MEASURE"] != nil))
struct WriteCostMeasurement {
    static func wchar() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/io", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }

    /// Root page of every named database (an `MDB_db` record in the main database: `md_root` at
    /// byte 40); a database whose root moved was dirtied.
    static func roots(_ store: Store) throws -> [String: (root: UInt64, depth: UInt16)] {
        try store.environment.read { tx in
            var roots: [String: (UInt64, UInt16)] = [:]
            try tx.forEach(in: store.schema.main) { key, value in
                guard value.count == 48 else { return true }
                let name = String(decoding: key, as: UTF8.self)
                roots[name] = (value.loadUnaligned(fromByteOffset: 40, as: UInt64.self), value.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
                return true
            }
            return roots
        }
    }

    static func change(_ random: inout SeededGenerator, exists: inout Set<Int>) -> Change {
        let words = ["alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "theta", "lorem", "ipsum"]
        func text(_ count: ClosedRange<Int>) -> String {
            (0..<Int.random(in: count, using: &random)).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
        }
        let item = Int.random(in: 0..<50_000, using: &random)
        let fields: [String: Value] = [
            "title": .string(text(3...6)), "content": .string(text(15...30)), "tags": .array([.string(text(1...1))]),
        ]
        if !exists.contains(item) {
            exists.insert(item)
            return .put("notes", id: "item-\(item)", fields: fields)
        }
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 12 {
            exists.remove(item)
            return .delete("notes", id: "item-\(item)")
        }
        if roll < 42 { return .put("notes", id: "item-\(item)", fields: fields) }
        return .patch("notes", id: "item-\(item)", fields: ["title": fields["title"]!])
    }

    /// The configuration measured: the defaults without a search index.
    static var withoutSearch: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.search.defaultFields = []
        return configuration
    }

    @Test func singleDurableCommits() throws {
        try withTemporaryStore(configuration: Self.withoutSearch) { store in
            var random = SeededGenerator(seed: 42)
            var exists: Set<Int> = []
            let count = 2_000
            var dirtied: [String: Int] = [:]
            var previous = try Self.roots(store)
            let firstTxn = store.environment.info().lastTransactionID
            let before = Self.wchar()
            for _ in 0..<count {
                try store.append([Self.change(&random, exists: &exists)])
                let now = try Self.roots(store)
                for (name, entry) in now where previous[name]?.root != entry.root { dirtied[name, default: 0] += 1 }
                previous = now
            }
            let written = Self.wchar() - before
            let commits = store.environment.info().lastTransactionID - firstTxn
            print("MEASURE single: \(commits) commits, \(written / commits) bytes per commit, \(Double(written) / Double(commits) / 4096) pages")
            for (name, times) in dirtied.sorted(by: { $0.key < $1.key }) {
                print("MEASURE   \(name): dirtied by \(times) commits, depth \(previous[name]!.depth)")
            }
            try store.environment.read { tx in
                for (name, database) in [("events", store.schema.events), ("event_ids", store.schema.eventIDs), ("meta", store.schema.meta)] {
                    let statistics = try tx.statistics(of: database)
                    print("MEASURE   stat \(name): depth \(statistics.depth), \(statistics.branchPages)+\(statistics.leafPages) pages")
                }
            }
        }
    }

    @Test(arguments: [true, false]) func concurrentWriters(search: Bool) throws {
        try withTemporaryStore(configuration: search ? Store.Configuration() : Self.withoutSearch) { store in
            let writers = 32
            let perWriter = 50
            let firstTxn = store.environment.info().lastTransactionID
            let before = Self.wchar()
            let start = DispatchTime.now()
            let group = DispatchGroup()
            for writer in 0..<writers {
                group.enter()
                Thread {
                    var random = SeededGenerator(seed: UInt64(writer + 1))
                    var exists: Set<Int> = []
                    for _ in 0..<perWriter { _ = try? store.append([Self.change(&random, exists: &exists)]) }
                    group.leave()
                }.start()
            }
            group.wait()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            let written = Self.wchar() - before
            let commits = store.environment.info().lastTransactionID - firstTxn
            let events = writers * perWriter
            print("MEASURE concurrent(search: \(search)): \(events) events in \(commits) commits, \(Double(events) / Double(commits)) per commit, \(written / events) bytes per event, \(Int(Double(events) / seconds)) events/s")
        }
    }

    @Test func batchedCommits() throws {
        try withTemporaryStore(configuration: Self.withoutSearch) { store in
            var random = SeededGenerator(seed: 7)
            var exists: Set<Int> = []
            func batch() -> [Change] { (0..<1000).map { _ in Self.change(&random, exists: &exists) } }
            for _ in 0..<30 { try store.append(batch()) }
            let before = Self.wchar()
            for _ in 0..<10 { try store.append(batch()) }
            let written = Self.wchar() - before
            print("MEASURE batched: \(written / 10_000) bytes per event (events 30,001-40,000, 1,000 per commit)")
        }
    }
}
