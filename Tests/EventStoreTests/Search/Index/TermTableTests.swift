import EventStoreTestSupport
import Testing

@testable import EventStore

/// The transaction's term table: each distinct term numbered once, and ranked in LMDB's key
/// order, whatever the terms' lengths and bytes.
struct TermTableTests {
    /// Terms that tie on their first 8 bytes, are prefixes of one another, hold zero bytes or
    /// bytes of 0x80 and more, plus random ones.
    static func terms(seed: UInt64) -> [[UInt8]] {
        var terms: [[UInt8]] = [
            [], [0], [0, 0], [1], Array("a".utf8), Array("a\u{0}".utf8), Array("ab".utf8),
            Array("abcdefgh".utf8), Array("abcdefgh\u{0}".utf8), Array("abcdefghi".utf8),
            Array("abcdefgg".utf8) + [0xFF], Array("abcdefgh".utf8) + [0xFF], [0xFF], [0xFF, 0xFF, 0, 1],
        ]
        var random = SeededGenerator(seed: seed)
        for _ in 0..<500 {
            let length = Int(random.next() % 14)
            // Few distinct bytes, so that long shared prefixes are common.
            terms.append((0..<length).map { _ in [0, 0x61, 0x62, 0x80, 0xFF][Int(random.next() % 5)] })
        }
        return terms
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func ranksFollowTheKeyOrder(seed: UInt64) {
        var table = TermTable()
        table.beginDocument()
        var numbers: [ByteKey: UInt32] = [:]
        for term in Self.terms(seed: seed) {
            let (number, _) = term.withUnsafeBytes { table.occurrence(of: $0) }
            if let known = numbers[ByteKey(term)] { #expect(known == number, "a term keeps its number") }
            numbers[ByteKey(term)] = number
        }
        #expect(table.count == numbers.count)
        let ranks = table.ranks()
        let sorted = numbers.keys.sorted()
        for (rank, term) in sorted.enumerated() {
            #expect(ranks[Int(numbers[term]!)] == Int32(rank), "\(term.bytes)")
        }
    }
}
