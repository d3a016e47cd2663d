import EventStoreTestSupport
import Testing

@testable import EventStore

/// The stored form of a term's postings in a segment: round trips, and every kind of damage is a
/// `corrupt` error, never a crash or a wrong posting.
struct PostingListTests {
    private func decode(_ bytes: [UInt8]) throws -> [Posting] {
        try bytes.withUnsafeBytes { try PostingList.Decoder.decodeAll($0) }
    }

    @Test func postingsRoundTripInDocIDOrder() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var docID = UInt32.random(in: 1...1_000, using: &random)
            var postings: [Posting] = []
            for _ in 0..<Int.random(in: 1...300, using: &random) {
                postings.append(
                    Posting(
                        docID: docID, frequency: UInt32.random(in: 0...10_000, using: &random),
                        length: UInt32.random(in: 0...UInt32.max, using: &random)))
                docID += UInt32.random(in: 1...100_000, using: &random)
            }
            let bytes = PostingList.encoded(postings)
            #expect(try decode(bytes) == postings)
            #expect(try bytes.withUnsafeBytes { try PostingList.count(in: $0) } == postings.count)
        }
    }

    @Test func postingsWithPositionsRoundTripAndKeepThePostingsDense() throws {
        var random = SeededGenerator(seed: 11)
        var storage = ByteWriter()
        var shapes: [(docID: UInt32, frequency: UInt32, length: UInt32, positions: Range<Int>)] = []
        var docID: UInt32 = 1
        for _ in 0..<300 {
            var word = UInt32(random.next() % 5)
            let positions = (0..<Int(1 + random.next() % 6)).map { _ -> TermPosition in
                word += UInt32(1 + random.next() % 300)
                return TermPosition(word: word, offset: random.next() % 3 == 0 ? UInt32(random.next() % 4) : 0)
            }
            var writer = ByteWriter()
            PositionList.encode(positions, into: &writer)
            #expect(try writer.bytes.withUnsafeBytes { try PositionList.Decoder.decodeAll($0) } == positions)
            shapes.append(
                (docID, UInt32(positions.count), 40, storage.bytes.count..<storage.bytes.count + writer.bytes.count))
            storage.write(raw: writer.bytes)
            docID += UInt32(1 + random.next() % 50)
        }
        try storage.bytes.withUnsafeBytes { buffer throws in
            let postings = shapes.map {
                Posting(
                    docID: $0.docID, frequency: $0.frequency, length: $0.length,
                    positions: UnsafeRawBufferPointer(rebasing: buffer[$0.positions]))
            }
            let bytes = PostingList.encoded(postings, positions: true)
            #expect(try decode(bytes) == postings)
            #expect(try bytes.withUnsafeBytes { try PostingList.Decoder($0).hasPositions })
            // The postings come first, as densely as without positions (one byte more each).
            let plain = PostingList.encoded(
                postings.map { Posting(docID: $0.docID, frequency: $0.frequency, length: $0.length) })
            #expect(bytes.count == plain.count + 2 + postings.count + storage.bytes.count)
        }
    }

    /// Merging copies runs of live postings as stored and writes only each run's first doc id
    /// again: the merged list is byte for byte the one built posting by posting, for lists with
    /// and without positions, whatever the dead documents (none, all, alternate, random runs),
    /// and a stored list without positions merges into one with them.
    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 7]) func mergingLiveRunsEqualsRebuildingPostingByPosting(seed: UInt64)
        throws
    {
        var random = SeededGenerator(seed: seed)
        var positionStorage = ByteWriter()
        var docID = UInt32.random(in: 1...50, using: &random)
        // Three lists in doc-id order, as three segments hold a term; the last one without
        // positions when the seed is odd.
        var lists: [[(docID: UInt32, frequency: UInt32, length: UInt32, positions: Range<Int>)]] = []
        for _ in 0..<3 {
            var list: [(docID: UInt32, frequency: UInt32, length: UInt32, positions: Range<Int>)] = []
            for _ in 0..<Int.random(in: 1...200, using: &random) {
                var writer = ByteWriter()
                var word = UInt32.random(in: 0...4, using: &random)
                let positions = (0..<Int.random(in: 1...4, using: &random)).map { _ -> TermPosition in
                    word += UInt32.random(in: 1...300, using: &random)
                    return TermPosition(word: word, offset: 0)
                }
                PositionList.encode(positions, into: &writer)
                let start = positionStorage.bytes.count
                positionStorage.write(raw: writer.bytes)
                list.append(
                    (
                        docID, UInt32.random(in: 1...500, using: &random),
                        UInt32.random(in: 1...100_000, using: &random),
                        start..<positionStorage.bytes.count
                    ))
                docID += UInt32.random(in: 1...(seed % 2 == 0 ? 3 : 20_000), using: &random)
            }
            lists.append(list)
        }
        let deadShapes: [(UInt32) -> Bool] = [
            { _ in false }, { _ in true }, { $0 % 2 == 0 }, { ($0 / 7) % 3 == 0 },
        ]
        try positionStorage.bytes.withUnsafeBytes { storage throws in
            let stored = lists.enumerated().map { number, list in
                let withPositions = !(seed % 2 == 1 && number == 2)
                let postings = list.map {
                    Posting(
                        docID: $0.docID, frequency: $0.frequency, length: $0.length,
                        positions: withPositions
                            ? UnsafeRawBufferPointer(rebasing: storage[$0.positions])
                            : UnsafeRawBufferPointer(start: nil, count: 0))
                }
                return PostingList.encoded(postings, positions: withPositions)
            }
            for isDead in deadShapes {
                var merged = PostingList.Builder(positions: true)
                var expected = PostingList.Builder(positions: true)
                for list in stored {
                    try list.withUnsafeBytes { list in
                        let read = try merged.append(liveOf: list) { !isDead($0) }
                        #expect(read == (try PostingList.count(in: list)))
                        for posting in try PostingList.Decoder.decodeAll(list) where !isDead(posting.docID) {
                            expected.append(posting)
                        }
                    }
                }
                #expect(merged.count == expected.count)
                guard expected.count > 0 else { continue }
                var mergedBytes = ByteWriter()
                var expectedBytes = ByteWriter()
                merged.encode(into: &mergedBytes)
                expected.encode(into: &expectedBytes)
                #expect(mergedBytes.bytes == expectedBytes.bytes, "seed \(seed)")
                #expect(
                    try mergedBytes.bytes.withUnsafeBytes { try PostingList.Decoder.decodeAll($0) }.count
                        == expected.count)
            }
        }
    }

    @Test(arguments: [
        ("a position that does not grow", [2, 0] as [UInt8]),
        ("an offset of 0 marked as present", [3, 0]),
        ("a truncated offset", [3]),
        ("a word beyond 32 bits", [0xFE, 0xFF, 0xFF, 0xFF, 0x3F]),
    ])
    func damagedPositionsAreCorrupt(_ name: String, _ bytes: [UInt8]) {
        #expect(throws: EventStoreError.self, "\(name)") {
            try bytes.withUnsafeBytes { try PositionList.Decoder.decodeAll($0) }
        }
    }

    @Test func theLargestDocIDRoundTrips() throws {
        let postings = [Posting(docID: 1, frequency: 1, length: 1), Posting(docID: .max, frequency: 2, length: 3)]
        #expect(try decode(PostingList.encoded(postings)) == postings)
    }

    @Test func smallPostingsTakeAFewBytesEach() {
        let postings = (1...1_000).map { Posting(docID: UInt32($0 * 3), frequency: 2, length: 40) }
        #expect(PostingList.encoded(postings).count <= 2 + 3 + 1_000 * 3)
    }

    @Test(
        arguments: [
            ("empty", [UInt8]()),
            ("unknown flags", [2, 1, 5, 1, 1]),
            ("postings' size beyond the bytes", [1, 1, 5, 1, 1]),
            ("positions beyond the bytes", [1, 1, 4, 5, 1, 1, 3, 0]),
            ("positions left over", [1, 1, 4, 5, 1, 1, 1, 0, 2]),
            ("postings' size longer than the postings", [1, 1, 5, 5, 1, 1, 1, 9, 0]),
            ("no postings", [0, 0]),
            ("count beyond the bytes", [0, 9, 5, 1, 1]),
            ("truncated posting", [0, 2, 5, 1, 1, 3, 1]),
            ("doc ids that do not grow", [0, 2, 5, 1, 1, 0, 1, 1]),
            ("trailing bytes", [0, 1, 5, 1, 1, 7]),
            ("doc id beyond 32 bits", [0, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 1]),
            ("doc ids overflow", [0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1, 1, 1, 1, 1]),
            ("frequency beyond 32 bits", [0, 1, 5, 0x80, 0x80, 0x80, 0x80, 0x10, 1]),
        ] as [(String, [UInt8])])
    func damagedListsAreCorrupt(_ damage: String, _ bytes: [UInt8]) {
        #expect(throws: EventStoreError.self, "\(damage)") { _ = try decode(bytes) }
        do {
            _ = try decode(bytes)
        } catch let error as EventStoreError {
            #expect(error.code == .corrupt, "\(damage)")
        } catch {
            Issue.record("\(damage): \(error)")
        }
    }
}
