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
                postings.append(Posting(
                    docID: docID, frequency: UInt32.random(in: 0...10_000, using: &random),
                    length: UInt32.random(in: 0...UInt32.max, using: &random)))
                docID += UInt32.random(in: 1...100_000, using: &random)
            }
            let bytes = PostingList.encoded(postings)
            #expect(try decode(bytes) == postings)
            #expect(try bytes.withUnsafeBytes { try PostingList.count(in: $0) } == postings.count)
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

    @Test(arguments: [
        ("empty", [UInt8]()),
        ("flags reserved for positions", [1, 1, 5, 1, 1]),
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
