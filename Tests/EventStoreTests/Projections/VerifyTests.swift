import EventStoreTestSupport
import LMDB
import Synchronization
import Testing

@testable import EventStore

/// `verify` on sound stores: consistent reports whose counts add up.
struct VerifyTests {
    typealias F = ProjectionFixtures

    @Test func anEmptyStoreIsConsistent() throws {
        try withTemporaryStore(configuration: F.configuration()) { store throws in
            let report = try store.verify()
            #expect(report.isConsistent && !report.truncated, "\(report.problems)")
            #expect(report.eventsChecked == 0)
        }
    }

    @Test func aCleanStoreReportIsConsistentAndCountsEverything() async throws {
        let clock = ManualClock()
        try await withTemporaryStore(configuration: F.configuration(clock: clock)) { store async throws in
            try await RebuildTests.workload(store, clock: clock, seed: 77, rounds: 10)
            let progress = Mutex<Store.Progress?>(nil)
            let report = try store.verify { step in progress.withLock { $0 = step } }
            #expect(report.isConsistent, "\(report.problems)")
            #expect(report.problems.isEmpty && !report.truncated)
            let head = try store.head()
            #expect(report.eventsChecked == head)
            #expect(progress.withLock { $0 } == Store.Progress(processed: head, total: head))
            // Every entry of every projection database was compared, and the search index item by
            // item and term by term.
            let projections = try F.projectionBytes(store)
            let search = projections["search (contents)"]?.count ?? 0
            #expect(search > 100)
            let entries =
                projections.filter { $0.key != "search (contents)" }.values.reduce(0) { $0 + $1.count / 2 } + search
            #expect(report.entriesCompared == UInt64(entries))
        }
    }

    @Test func verifyingDoesNotChangeTheStore() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append((0..<50).map { .put("notes", id: "n\($0)", fields: ["title": "동기화를 \($0)"]) })
            let before = try F.projectionBytes(store)
            let head = try store.head()
            _ = try store.verify()
            #expect(try F.projectionBytes(store) == before)
            #expect(try store.head() == head)
        }
    }

    @Test func aFreshStoreWithACustomProjectionIsConsistent() throws {
        var configuration = F.configuration()
        configuration.projections = [CustomProjectionTests.NotesPerTag()]
        try withTemporaryStore(configuration: configuration) { store throws in
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
    }

    @Test func aReportKeepsAtMostAThousandProblems() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            try await store.append((0..<1_100).map { .put("notes", id: "n\($0)", fields: ["title": "t"]) })
            try RebuildTests.tamper(store) { tx, database throws in
                let items = try database("items")
                for index in 0..<1_100 {
                    try tx.put(ItemState().encoded(), forKey: Keys.item("notes", "n\(index)"), in: items)
                }
            }
            let report = try store.verify()
            #expect(report.problems.count == VerificationReport.maxProblems)
            #expect(report.truncated && !report.isConsistent)
        }
    }
}
