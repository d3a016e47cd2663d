import Testing

@testable import EventStore

/// The search index's directory: its encoding and the merge policy.
struct SegmentDirectoryTests {
    private func directory(tiers postings: [UInt64]) -> SegmentDirectory {
        var directory = SegmentDirectory()
        for size in postings {
            let id = directory.nextSegment
            directory.nextSegment += 1
            let first = directory.nextDoc
            directory.nextDoc += 10
            directory.segments.append(.init(id: id, firstDoc: first, lastDoc: first + 9, postings: size))
        }
        return directory
    }

    @Test func tiersGrowByFactorsOfEight() {
        #expect(SegmentDirectory.tier(0) == 0)
        #expect(SegmentDirectory.tier(511) == 0)
        #expect(SegmentDirectory.tier(512) == 1)
        #expect(SegmentDirectory.tier(4_095) == 1)
        #expect(SegmentDirectory.tier(4_096) == 2)
        #expect(SegmentDirectory.tier(UInt64(1) << 30) > SegmentDirectory.tier(UInt64(1) << 27))
    }

    @Test func eightAdjacentSegmentsOfOneTierMerge() {
        #expect(directory(tiers: Array(repeating: 30, count: 7)).nextMergeRange() == nil)
        #expect(directory(tiers: Array(repeating: 30, count: 8)).nextMergeRange() == 0..<8)
        // The oldest run of a tier merges first; a bigger segment in between splits runs.
        let mixed = directory(
            tiers: [5_000, 5_000] + Array(repeating: 30, count: 3) + [600] + Array(repeating: 30, count: 9))
        #expect(mixed.nextMergeRange() == 6..<14)
    }

    @Test func tooManySegmentsMergeTheSmallestAdjacentRun() {
        // Alternating tiers never form a run, so only the bound on the count merges them.
        var sizes = (0..<(SegmentDirectory.maxSegments + 1)).map { $0 % 2 == 0 ? UInt64(600) : 30 }
        sizes[0] = 40_000
        let range = directory(tiers: sizes).nextMergeRange()
        #expect(range?.count == SegmentDirectory.fanIn)
        #expect(range?.lowerBound == 1, "the window with the most small segments: \(String(describing: range))")
    }

    @Test func aMergeUnderWayStartsNoOther() {
        var directory = directory(tiers: Array(repeating: 30, count: 16))
        directory.merge = .init(inputs: [1, 2], output: directory.nextSegment, resumeAfter: nil, written: 0)
        directory.nextSegment += 1
        #expect(directory.nextMergeRange() == nil)
    }

    @Test func theEncodingRoundTrips() throws {
        var directory = directory(tiers: [9_000, 700, 30, 30])
        directory.merge = .init(
            inputs: [3, 4], output: directory.nextSegment, resumeAfter: Array("notes\0sync".utf8), written: 12)
        directory.nextSegment += 1
        directory.cleanup = [.segment(77), .documents(from: 3, through: 90)]
        directory.credit = 1_234
        let decoded = try directory.encoded().withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        #expect(decoded == directory)
        let fresh = try SegmentDirectory().encoded().withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        #expect(fresh == SegmentDirectory())
    }

    @Test func aMergeThatMovesTermsIsReadInPlaceOfItsInputsAndOneThatCopiesIsNot() throws {
        var directory = directory(tiers: [9_000, 700, 30, 30])
        let output = directory.nextSegment
        directory.nextSegment += 1
        directory.merge = .init(inputs: [2, 3], output: output, resumeAfter: Array("notes\0m".utf8), written: 400)
        let readable = directory.readableSegments
        #expect(readable.map(\.id) == [1, output, 2, 3, 4])
        #expect(
            readable[1].firstDoc == directory.segments[1].firstDoc
                && readable[1].lastDoc == directory.segments[2].lastDoc)
        #expect(readable[1].postings == 400, "the output's entry changes as the merge writes")
        directory.merge?.movesTerms = false
        #expect(directory.readableSegments == directory.segments)
        directory.merge = nil
        #expect(directory.readableSegments == directory.segments)
    }

    @Test func aMergeOfDirectoryFormatTwoCopiesTerms() throws {
        var directory = directory(tiers: [30, 30])
        directory.merge = .init(inputs: [1, 2], output: directory.nextSegment, resumeAfter: nil, written: 0)
        directory.nextSegment += 1
        var bytes = directory.encoded()
        #expect(bytes[0] == 4)
        // The merge ends with its flag, its token (0), no resume point, then no clean-up.
        #expect(Array(bytes.suffix(4)) == [1, 0, 0, 0])
        let flag = bytes.count - 4
        // Format 2 wrote neither the flag nor the token.
        bytes.removeSubrange(flag..<flag + 2)
        bytes[0] = 2
        let decoded = try bytes.withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        #expect(decoded.merge?.movesTerms == false)
        #expect(decoded.merge?.inputs == [1, 2] && decoded.segments == directory.segments)
        // A flag other than 0 or 1 is corrupt.
        var damaged = directory.encoded()
        damaged[flag] = 7
        #expect(throws: EventStoreError.self) { _ = try damaged.withUnsafeBytes { try SegmentDirectory(decoding: $0) } }
    }

    @Test func aMergeOfDirectoryFormatThreeHasNoTokenAndFormatFourKeepsIt() throws {
        var directory = directory(tiers: [30, 30])
        directory.merge = .init(
            inputs: [1, 2], output: directory.nextSegment, resumeAfter: Array("notes\0k".utf8), written: 12,
            token: 0xDEAD_BEEF_CAFE)
        directory.nextSegment += 1
        let decoded = try directory.encoded().withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        #expect(decoded == directory)
        #expect(decoded.merge?.token == 0xDEAD_BEEF_CAFE)
        // Format 3: the same without the token's varint, which follows the flag.
        directory.merge?.token = 0
        var bytes = directory.encoded()
        let resume = Array("notes\0k".utf8)
        let flag = bytes.count - 1 - resume.count - 1 - 1 - 1 - 1
        #expect(bytes[flag] == 1 && bytes[flag + 1] == 0, "the flag, then a token of 0")
        bytes.remove(at: flag + 1)
        bytes[0] = 3
        let old = try bytes.withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        #expect(old == directory, "read with no token: its steps are taken inside commits")
        #expect(old.merge?.movesTerms == true)
    }

    @Test func damagedDirectoriesAreCorrupt() throws {
        var directory = directory(tiers: [30, 30, 30])
        directory.merge = .init(inputs: [1, 2], output: directory.nextSegment, resumeAfter: nil, written: 0)
        directory.nextSegment += 1
        let bytes = directory.encoded()
        for cut in 0..<bytes.count {
            #expect(throws: EventStoreError.self) {
                _ = try Array(bytes[..<cut]).withUnsafeBytes { try SegmentDirectory(decoding: $0) }
            }
        }
        #expect(throws: EventStoreError.self) {
            _ = try (bytes + [0]).withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        }
        // Overlapping doc ranges.
        var overlapping = self.directory(tiers: [30, 30])
        overlapping.segments[1].firstDoc = overlapping.segments[0].lastDoc
        #expect(throws: EventStoreError.self) {
            _ = try overlapping.encoded().withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        }
        // A merge whose inputs are not live segments.
        var stray = self.directory(tiers: [30, 30])
        stray.merge = .init(inputs: [1, 99], output: stray.nextSegment, resumeAfter: nil, written: 0)
        stray.nextSegment += 1
        #expect(throws: EventStoreError.self) {
            _ = try stray.encoded().withUnsafeBytes { try SegmentDirectory(decoding: $0) }
        }
    }
}
