import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// Walking several segments' terms together: every term once, in key order, with its list from
/// each segment that holds it (in the segments' order), across the walk's read-ahead batches,
/// from a prefix and after a term.
struct TermWalkTests {
    typealias F = ProjectionFixtures

    /// A term and its lists, as the walk yields them.
    struct Step: Equatable {
        var term: [UInt8]
        var lists: [Int: [UInt8]]
    }

    /// A store with three segments of several hundred terms each (more than a read-ahead batch),
    /// which share some of their terms.
    static func store(_ body: (Store, [UInt32]) throws -> Void) async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            var random = SeededGenerator(seed: 5)
            for batch in 0..<3 {
                try await store.append(
                    (0..<120).map { index in
                        let words = (0..<6).map { _ in "t\(batch * 200 + Int(random.next() % 400))" }
                        return .put(
                            "notes", id: "n\(batch)-\(index)", fields: ["title": .string(words.joined(separator: " "))])
                    })
            }
            let segments = try SegmentMergerTests.directory(store).segments.map(\.id)
            #expect(segments.count == 3)
            try body(store, segments)
        }
    }

    /// The steps read entry by entry: each segment's terms (with `prefix`, after `after`), merged.
    static func expected(
        _ tx: ReadTransaction, _ database: Database, _ segments: [UInt32], prefix: [UInt8], after: [UInt8]?
    ) throws -> [Step] {
        var byTerm: [ByteKey: [Int: [UInt8]]] = [:]
        for (index, segment) in segments.enumerated() {
            let key = IndexKeys.segment(segment)
            try key.withUnsafeBytes { start in
                try tx.forEach(in: database, from: start) { entryKey, value in
                    guard entryKey.starts(with: key) else { return false }
                    let first = UnsafeRawBufferPointer(rebasing: entryKey.dropFirst(key.count))
                    try SegmentEntry.forEachTerm(first: first, value: value) { term, list in
                        let term = Array(term)
                        guard term.starts(with: prefix) else { return true }
                        if let after, !after.lexicographicallyPrecedes(term) { return true }
                        byTerm[ByteKey(term), default: [:]][index] = Array(list)
                        return true
                    }
                    return true
                }
            }
        }
        return byTerm.keys.sorted().map { Step(term: $0.bytes, lists: byTerm[$0]!) }
    }

    static func walk(
        _ tx: ReadTransaction, _ database: Database, _ segments: [UInt32], prefix: [UInt8], after: [UInt8]?
    ) throws -> [Step] {
        var walk = try TermWalk(tx: tx, database: database, segments: segments, prefix: prefix, after: after)
        var steps: [Step] = []
        while let (term, lists) = try walk.next() {
            steps.append(
                Step(term: term, lists: Dictionary(uniqueKeysWithValues: lists.map { ($0.segment, Array($0.list)) })))
        }
        #expect(walk.isAtEnd)
        return steps
    }

    @Test(
        arguments: [("", nil), ("t3", nil), ("", "t250"), ("t2", "t25"), ("t", "t9"), ("u", nil)] as [(String, String?)]
    )
    func theWalkYieldsWhatTheKeysHold(prefix: String, after: String?) async throws {
        try await Self.store { store, segments in
            try store.read { reader in
                let database = try reader.projection.searchSegments
                let collection = Keys.collectionPrefix("notes")
                let prefix = collection + Array(prefix.utf8)
                let after = after.map { collection + Array($0.utf8) }
                let expected = try Self.expected(reader.tx, database, segments, prefix: prefix, after: after)
                let walked = try Self.walk(reader.tx, database, segments, prefix: prefix, after: after)
                #expect(walked == expected)
                if prefix == collection && after == nil {
                    #expect(expected.count > 3 * TermWalk.batchEntries, "the walk crosses read-ahead batches")
                    #expect(expected.contains { $0.lists.count > 1 }, "segments share terms")
                }
            }
        }
    }

    /// A merge writes its output while it walks its inputs: the walk goes on from where it was,
    /// and the output, written in blocks as it goes, holds every term walked.
    @Test func writingWhileWalkingDoesNotDisturbTheWalk() async throws {
        try await Self.store { store, segments in
            let collection = Keys.collectionPrefix("notes")
            let expected = try store.read { reader in
                try Self.expected(
                    reader.tx, try reader.projection.searchSegments, segments, prefix: collection, after: nil)
            }
            let output = segments.max()! + 1
            let (walked, written) = try store.environment.write { tx in
                let databases = store.schema.generations[try StoreReader.activeGeneration(tx, store.schema)]
                var walk = try TermWalk(
                    tx: tx, database: databases.searchSegments, segments: segments, prefix: collection)
                var entries = SegmentEntry.Builder(segment: output)
                let put = { (key: [UInt8], value: [UInt8]) in
                    _ = try tx.put(value, forKey: key, in: databases.searchSegments)
                }
                var steps: [Step] = []
                while let (term, lists) = try walk.next() {
                    steps.append(
                        Step(
                            term: term,
                            lists: Dictionary(uniqueKeysWithValues: lists.map { ($0.segment, Array($0.list)) })))
                    try term.withUnsafeBytes { term in
                        try Array(lists[0].list).withUnsafeBytes { try entries.add(term: term, list: $0, put: put) }
                    }
                    // Written now and then in the middle of a batch, as a merge step ends.
                    if steps.count % 37 == 0 { try entries.flush(put: put) }
                }
                try entries.flush(put: put)
                return (steps, try Self.expected(tx, databases.searchSegments, [output], prefix: [], after: nil))
            }
            #expect(walked == expected)
            #expect(written.map(\.term) == expected.map(\.term))
            #expect(written.map { $0.lists[0] } == expected.map { $0.lists.sorted { $0.key < $1.key }[0].value })
        }
    }
}
