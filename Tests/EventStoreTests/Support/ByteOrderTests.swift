import EventStoreTestSupport
import Testing

@testable import EventStore

/// The store's one byte order and its shortcuts: each shortcut agrees with comparing the bytes.
struct ByteOrderTests {
    /// Byte strings that meet the shortcuts' edges: empty, shorter than 8 bytes, exactly 8,
    /// zero bytes where a shorter string ends, equal first 8 bytes, non-ASCII.
    static func samples(_ random: inout SeededGenerator) -> [[UInt8]] {
        var samples: [[UInt8]] = [[], [0], [0, 0], [1], [255], Array("abcdefgh".utf8), Array("abcdefgh\0".utf8)]
        for _ in 0..<300 {
            let length = Int.random(in: 0...20, using: &random)
            samples.append((0..<length).map { _ in [0, 1, 97, 98, 255].randomElement(using: &random)! })
        }
        return samples
    }

    @Test func integerPrefixesOrderAsTheBytesDo() {
        var random = SeededGenerator(seed: 7)
        let samples = Self.samples(&random)
        for lhs in samples {
            for rhs in samples.prefix(80) {
                let order = lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { compareBytes(left, $0) } }
                let (left, right) = (
                    lhs.withUnsafeBytes { bigEndianPrefix($0) }, rhs.withUnsafeBytes { bigEndianPrefix($0) }
                )
                if left != right { #expect((left < right) == (order < 0), "\(lhs) \(rhs)") }
                if order == 0 { #expect(left == right) }
                // From an offset both strings reach, as the index changes' sort uses it.
                let offset = min(lhs.count, rhs.count, 3)
                if lhs.prefix(offset) == rhs.prefix(offset) {
                    let (left, right) = (
                        lhs.withUnsafeBytes { bigEndianPrefix($0, from: offset) },
                        rhs.withUnsafeBytes { bigEndianPrefix($0, from: offset) }
                    )
                    if left != right { #expect((left < right) == (order < 0), "\(lhs) \(rhs) from \(offset)") }
                }
            }
        }
    }

    @Test func commonPrefixesAreCountedAcrossWordBoundaries() {
        var random = SeededGenerator(seed: 8)
        let samples = Self.samples(&random)
        for lhs in samples {
            for rhs in samples.prefix(80) {
                let expected = zip(lhs, rhs).prefix { $0 == $1 }.count
                let counted = lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { commonPrefixCount(left, $0) } }
                #expect(counted == expected, "\(lhs) \(rhs)")
            }
        }
        let long = Array(repeating: UInt8(7), count: 40)
        for position in 0..<40 {
            var other = long
            other[position] = 8
            #expect(long.withUnsafeBytes { left in other.withUnsafeBytes { commonPrefixCount(left, $0) } } == position)
        }
    }

    /// Field maps are written in the UTF-8 order of their names, however many names share their
    /// first 8 bytes.
    @Test func fieldMapsAreVisitedInUTF8Order() {
        var random = SeededGenerator(seed: 9)
        let stems = ["", "a", "title", "description", "é", "日本", "createdAt", "createdAtX"]
        for _ in 0..<200 {
            var map: [String: Int] = [:]
            for number in 0..<Int.random(in: 0...40, using: &random) {
                let name = stems.randomElement(using: &random)! + (Bool.random(using: &random) ? "\(number)" : "")
                map[name] = number
            }
            let visited = map.indicesInUTF8Order().map { map[$0].key }
            #expect(visited == map.keys.sorted(by: utf8Less))
            #expect(
                visited.map { Array($0.utf8) }
                    == map.keys.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        }
    }

    @Test func keyBuffersKeepAPrefixAndGrow() {
        let buffer = KeyBuffer(capacity: 4)
        buffer.replace(with: UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(buffer.count == 0)
        [UInt8]("index".utf8).withUnsafeBytes { buffer.replace(with: $0) }
        #expect(Array(buffer.bytes) == Array("index".utf8))
        [UInt8]("es of many entries".utf8).withUnsafeBytes { buffer.replace(keeping: 3, appending: $0) }
        #expect(Array(buffer.bytes) == Array("indes of many entries".utf8))
        [UInt8]("x".utf8).withUnsafeBytes { buffer.replace(keeping: 0, appending: $0) }
        #expect(Array(buffer.bytes) == Array("x".utf8))
    }
}
