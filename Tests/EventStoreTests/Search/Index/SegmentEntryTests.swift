import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// Search segment entries: blocks of adjacent terms' lists, written by the builder, read back
/// term by term, looked up in LMDB through a cursor, and refused when damaged.
struct SegmentEntryTests {
    typealias F = ProjectionFixtures

    /// Sorted distinct terms (some long, many sharing prefixes) with lists that start like posting
    /// lists (flags 0 or 1), of a few bytes to beyond a block.
    static func terms(_ random: inout SeededGenerator, count: Int) -> [(term: [UInt8], list: [UInt8])] {
        var terms = Set<[UInt8]>()
        while terms.count < count {
            let length = random.next() % 10 == 0 ? Int(random.next() % 300) + 1 : Int(random.next() % 12) + 1
            terms.insert(Array("notes\0".utf8) + (0..<length).map { _ in UInt8(0x61 + random.next() % 4) })
        }
        return terms.sorted { $0.lexicographicallyPrecedes($1) }.map { term in
            let size = random.next() % 20 == 0 ? Int(random.next() % 3_000) + 1 : Int(random.next() % 60) + 1
            return (term, [UInt8(random.next() % 2)] + (1..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
    }

    /// The entries the builder writes for `terms` in segment `segment`.
    static func entries(_ terms: [(term: [UInt8], list: [UInt8])], segment: UInt32 = 7) throws -> [(
        key: [UInt8], value: [UInt8]
    )] {
        var builder = SegmentEntry.Builder(segment: segment)
        var entries: [(key: [UInt8], value: [UInt8])] = []
        let put = { (key: [UInt8], value: [UInt8]) in entries.append((key, value)) }
        for (term, list) in terms {
            term.withUnsafeBytes { term in
                list.withUnsafeBytes { builder.add(term: term, list: $0, put: put) }
            }
        }
        builder.flush(put: put)
        return entries
    }

    /// The terms and lists of an entry.
    static func expand(_ entry: (key: [UInt8], value: [UInt8])) throws -> [(term: [UInt8], list: [UInt8])] {
        var terms: [(term: [UInt8], list: [UInt8])] = []
        try entry.key.withUnsafeBytes { key in
            try entry.value.withUnsafeBytes { value in
                try SegmentEntry.forEachTerm(first: UnsafeRawBufferPointer(rebasing: key[4...]), value: value) {
                    terms.append((Array($0), Array($1)))
                    return true
                }
            }
        }
        return terms
    }

    @Test(arguments: [1, 2, 50, 2_000])
    func theBuilderPacksTermsIntoBlocksThatReadBackInOrder(count: Int) throws {
        var random = SeededGenerator(seed: UInt64(count))
        let terms = Self.terms(&random, count: count)
        let entries = try Self.entries(terms)
        #expect(entries.allSatisfy { $0.key.starts(with: IndexKeys.segment(7)) })
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.key.lexicographicallyPrecedes($1.key) })
        var read: [(term: [UInt8], list: [UInt8])] = []
        for entry in entries {
            let expanded = try Self.expand(entry)
            #expect(entry.key == IndexKeys.segment(7, expanded[0].term), "an entry is keyed by its first term")
            if entry.value.first == SegmentEntry.blockMarker {
                #expect(expanded.count >= 2)
                #expect(entry.key.count + entry.value.count <= SegmentEntry.maxBytes, "a block fits on a leaf page")
            } else {
                #expect(expanded.count == 1 && expanded[0].list == entry.value, "a term alone: its list is the value")
            }
            read += expanded
        }
        #expect(read.map(\.term) == terms.map(\.term))
        #expect(read.map(\.list) == terms.map(\.list))
        if count == 2_000 {
            #expect(entries.count < count / 4, "small lists share entries: \(entries.count) entries")
        }
        // Every term is found in its entry; a term between two is found in none.
        for entry in entries {
            for (term, list) in try Self.expand(entry) {
                for (probe, expected) in [(term, Optional(list)), (term + [0], nil), (Array(term.dropLast()), nil)] {
                    let found = try entry.key.withUnsafeBytes { key in
                        try entry.value.withUnsafeBytes { value in
                            try probe.withUnsafeBytes {
                                try SegmentEntry.list(
                                    of: $0, first: UnsafeRawBufferPointer(rebasing: key[4...]), value: value
                                ).map(Array.init)
                            }
                        }
                    }
                    if expected != nil || !terms.contains(where: { $0.term == probe }) { #expect(found == expected) }
                }
            }
        }
    }

    /// Looked up through LMDB, a term is found in the entry that holds it, in its own segment
    /// only, whether it starts an entry, sits inside a block or is the segment's last.
    @Test func aTermIsFoundInItsSegmentThroughTheCursor() async throws {
        try await withTemporaryStore(configuration: F.configuration()) { store async throws in
            var random = SeededGenerator(seed: 11)
            let first = Self.terms(&random, count: 400)
            let second = Self.terms(&random, count: 300)
            let database = try store.read { try $0.projection.searchSegments }
            _ = try store.environment.write { tx in
                for (segment, terms) in [(UInt32(90_000), first), (90_001, second)] {
                    for entry in try Self.entries(terms, segment: segment) {
                        try tx.put(entry.value, forKey: entry.key, in: database)
                    }
                }
            }
            try store.read { reader in
                try reader.tx.withCursor(on: database) { cursor in
                    for (segment, terms, other) in [(UInt32(90_000), first, second), (90_001, second, first)] {
                        let prefix = IndexKeys.segment(segment)
                        for (term, list) in terms {
                            let found = try SegmentEntry.list(of: term, segment: prefix, cursor: cursor)
                            #expect(found.map(Array.init) == list)
                        }
                        let mine = Set(terms.map(\.term))
                        for (term, _) in other where !mine.contains(term) {
                            #expect(try SegmentEntry.list(of: term, segment: prefix, cursor: cursor) == nil)
                        }
                        #expect(try SegmentEntry.list(of: [0], segment: prefix, cursor: cursor) == nil)
                        #expect(try SegmentEntry.list(of: [0xFF], segment: prefix, cursor: cursor) == nil)
                    }
                }
            }
        }
    }

    /// Damaged blocks are refused, never a crash: every truncation throws, and a flipped byte
    /// either throws or reads terms that still grow.
    @Test func damagedBlocksAreCorruptNeverACrash() throws {
        var random = SeededGenerator(seed: 3)
        let entries = try Self.entries(Self.terms(&random, count: 300))
        let block = try #require(entries.first { $0.value.first == SegmentEntry.blockMarker })
        for length in 1..<block.value.count {
            #expect(throws: EventStoreError.self) { try Self.expand((block.key, Array(block.value[..<length]))) }
        }
        for _ in 0..<3_000 {
            var value = block.value
            value[Int(random.next() % UInt64(value.count))] ^= UInt8(1 << (random.next() % 8))
            guard let terms = try? Self.expand((block.key, value)) else { continue }
            #expect(zip(terms, terms.dropFirst()).allSatisfy { $0.term.lexicographicallyPrecedes($1.term) })
        }
        // Terms out of order, or a shared length that is not all the previous term has in common.
        var writer = ByteWriter()
        let header: [UInt8] = [0, 7] + Array("notes\0b".utf8) + [1] + [6, 1] + Array("b".utf8) + [1]
        writer.write(SegmentEntry.blockMarker)
        writer.write(varint: 2)
        writer.write(varint: header.count)
        writer.write(raw: header)
        writer.write(raw: [0, 0] as [UInt8])
        #expect(throws: EventStoreError.self) {
            try Self.expand((IndexKeys.segment(7, Array("notes\0b".utf8)), writer.bytes))
        }
    }
}
