import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// Merge steps computed between commits on another thread: the commits that take them build the
/// index that commits computing their own steps build, a step applies only to the merge state it
/// was computed from, and without them the writer still keeps the index bounded.
struct MergeAheadTests {
    typealias F = ProjectionFixtures
    typealias M = SegmentMergerTests

    /// The index by its meaning: every term's live postings, every document, every total.
    static func contents(_ store: Store) throws -> [String] {
        try store.read { reader in try SearchIndexAudit.contents(tx: reader.tx, databases: reader.projection) }
    }

    /// The long merge of ``SegmentMergerTests`` under way, its next step computed ahead.
    static func aMergeWithItsStepReady(_ store: Store) async throws -> (
        helper: MergeAhead, merge: SegmentDirectory.Merge, databases: ProjectionDatabases
    ) {
        var random = SeededGenerator(seed: 5)
        try await M.storeWithALongMerge(store, &random)
        let helper = try #require(store.mergeAhead)
        helper.settle()
        let merge = try #require(M.directory(store).merge)
        let databases = try store.read { reader in try reader.projection }
        return (helper, merge, databases)
    }

    /// Verify finds nothing, and a rebuild answers the queries the same.
    static func expectConsistentAndAsRebuilt(_ store: Store) async throws {
        let report = try store.verify()
        #expect(report.isConsistent, "\(report.problems)")
        let hits = try M.queries.map { try F.hits(store, $0) }
        try await store.rebuildProjections()
        #expect(try M.queries.map { try F.hits(store, $0) } == hits)
    }

    /// The long merge of ``SegmentMergerTests``, then small commits and deletes until it and the
    /// merges after it are done; `afterEachCommit` runs after every commit.
    static func writeThroughALongMerge(_ store: Store, afterEachCommit: () throws -> Void) async throws {
        var random = SeededGenerator(seed: 5)
        try await M.storeWithALongMerge(store, &random)
        try afterEachCommit()
        for commit in 0..<300 {
            if commit % 5 == 0 {
                try await store.delete("notes", id: "b\(commit % 7)-\(commit)")
            } else {
                try await store.put(
                    "notes", id: "c\(commit % 40)", fields: ["title": .string(M.title(&random, words: 6))])
            }
            try afterEachCommit()
        }
    }

    @Test func stepsComputedAheadBuildTheIndexThatStepsInsideCommitsBuild() async throws {
        let inline = TemporaryDirectory()
        let ahead = TemporaryDirectory()
        defer {
            inline.remove()
            ahead.remove()
        }
        let reference = try Store.open(at: inline.path, configuration: M.configuration)
        try await Self.writeThroughALongMerge(reference) {}
        let store = try Store.open(at: ahead.path, configuration: F.configuration())
        let helper = try #require(store.mergeAhead)
        var tokens: Set<UInt64> = []
        try await Self.writeThroughALongMerge(store) {
            // Each step is ready before the next commit, so that every merge takes its steps here.
            helper.settle()
            if let merge = try M.directory(store).merge { tokens.insert(merge.token) }
        }
        let counts = helper.counts
        #expect(counts.taken >= 3 && counts.computed >= counts.taken, "\(counts)")
        #expect(tokens.count >= 3 && !tokens.contains(0), "merges of the store's commits, each with a token: \(tokens)")
        let segments = try M.directory(store).segments.count
        #expect(segments <= SegmentDirectory.maxSegments, "merges completed: \(segments) segments")

        #expect(try Self.contents(store) == Self.contents(reference), "the same live postings, documents and totals")
        #expect(try M.queries.map { try F.hits(store, $0) } == M.queries.map { try F.hits(reference, $0) })
        for each in [store, reference] {
            let report = try each.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
        store.close()
        reference.close()
    }

    @Test func aStepIsTakenOnlyForTheMergeStateItWasComputedFrom() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            let (helper, merge, databases) = try await Self.aMergeWithItsStepReady(store)
            let step = try #require(helper.readyStep(for: merge, databases: databases), "computed after the commit")
            #expect(step.merge == merge && !step.entries.isEmpty && step.work > 0)

            var moved = merge
            moved.written += 1
            var resumed = merge
            resumed.resumeAfter = [0x6E]
            var other = merge
            other.token &+= 1
            for changed in [moved, resumed, other] {
                #expect(helper.readyStep(for: changed, databases: databases) == nil, "\(changed)")
            }
            let otherGeneration = try #require(store.schema.generations.first { $0 !== databases })
            #expect(helper.readyStep(for: merge, databases: otherGeneration) == nil)

            // The commit that spends a budget takes it, and the merge moves on.
            try await store.append(
                (0..<40).map { .put("other", id: "next-\($0)", fields: ["title": "next \($0) alpha beta"]) })
            let after = try #require(M.directory(store).merge)
            #expect(after.written == merge.written + step.written && after.resumeAfter == step.through)
            helper.settle()
            #expect(helper.readyStep(for: merge, databases: databases) == nil, "replaced by the next one")
            #expect(try helper.readyStep(for: #require(M.directory(store).merge), databases: databases) != nil)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
        }
    }

    @Test func withoutStepsComputedAheadTheCommitsComputeThem() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            let helper = try #require(store.mergeAhead)
            helper.stop()
            var random = SeededGenerator(seed: 9)
            var most = 0
            var tokens: Set<UInt64> = []
            for round in 0..<260 {
                try await store.put(
                    "notes", id: "n\(round % 50)", fields: ["title": .string(M.title(&random, words: 5))])
                let directory = try M.directory(store)
                most = max(most, directory.segments.count)
                if let merge = directory.merge { tokens.insert(merge.token) }
            }
            #expect(helper.counts.computed == 0 && helper.counts.taken == 0)
            #expect(tokens.count >= 3, "merges went on: \(tokens.count)")
            #expect(
                most <= 2 * SegmentDirectory.maxSegments + 1, "at most \(most) segments: the commits merged themselves")
            try await Self.expectConsistentAndAsRebuilt(store)
        }
    }

    @Test func aMergeGoesOnAfterReopeningAndUnderConcurrentWriters() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var random = SeededGenerator(seed: 5)
        var store = try Store.open(at: directory.path, configuration: F.configuration())
        try await M.storeWithALongMerge(store, &random)
        let token = try #require(M.directory(store).merge?.token)
        #expect(token != 0)
        store.close()
        store = try Store.open(at: directory.path, configuration: F.configuration())
        #expect(try M.directory(store).merge?.token == token, "the merge and its token survive reopening")
        // Eight tasks write at once while the merges go on; nothing waits for the helper.
        let writers = store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(100 + writer))
                    for round in 0..<40 {
                        try await writers.put(
                            "notes", id: "w\(writer)-\(round % 10)",
                            fields: ["title": .string(M.title(&random, words: 4))])
                    }
                }
            }
            try await group.waitForAll()
        }
        let helper = try #require(store.mergeAhead)
        for extra in 0..<200 {
            helper.settle()
            let current = try M.directory(store)
            if current.merge?.token != token && current.cleanup.isEmpty { break }
            try await store.put("other", id: "z\(extra)", fields: ["title": "more words"])
        }
        #expect(try M.directory(store).merge?.token != token, "the reopened merge completed")
        #expect(helper.counts.taken >= 1)
        try await Self.expectConsistentAndAsRebuilt(store)
        store.close()
    }

    /// A commit waits for the step of the merge under way, and after ``MergeAhead/patience``
    /// commits in a row without one (the helper starved, or its reads failing) computes it
    /// itself; then it waits again.
    @Test func aCommitWaitsForTheStepThenComputesItAfterPatienceRunsOut() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            let (helper, ready, databases) = try await Self.aMergeWithItsStepReady(store)
            var merge = ready
            guard case .apply = helper.decide(for: merge, databases: databases) else {
                Issue.record("the step computed after the commit applies")
                return
            }
            merge.written += 1  // a state no step was computed for
            var decisions: [String] = []
            for _ in 0...(2 * MergeAhead.patience + 1) {
                switch helper.decide(for: merge, databases: databases) {
                case .apply: decisions.append("apply")
                case .wait: decisions.append("wait")
                case .compute: decisions.append("compute")
                }
            }
            let waits = Array(repeating: "wait", count: MergeAhead.patience)
            #expect(decisions == waits + ["compute"] + waits + ["compute"])
        }
    }
}
