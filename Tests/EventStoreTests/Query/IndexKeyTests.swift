import EventStoreTestSupport
import Testing

@testable import EventStore

/// The index key encoding: byte order equals value order, for every type and across types,
/// and truncation of long values keeps every entry where its value belongs.
struct IndexKeyTests {
    static let samples: [Value?] = [
        nil, .null, false, true, .int(.min), .int(.min + 1), .int(-1 << 53 - 1), .double(-1e300), .double(-2.5),
        .int(-2), .double(-0.0), .int(0), .double(0.0), .double(1e-300), .int(1), .double(1.0), .double(1.5), .int(2),
        .int(1 << 53), .int(1 << 53 + 1), .double(9_007_199_254_740_994), .int(.max - 1), .int(.max),
        .double(9.3e18), .double(1e300), "", "\0", "\0\0", "\0a", "a", "a\0", "a\0b", "ab", "b", "é", "e\u{301}", "동기화",
        "😀", .array([]), .array([1, "x"]), .object([:]), .object(["a": 1]),
    ]

    @Test func byteOrderEqualsValueOrder() {
        for lhs in Self.samples {
            for rhs in Self.samples {
                let bytes = IndexKey.encoded(lhs).lexicographicallyPrecedes(IndexKey.encoded(rhs))
                let expected = QueryReference.compare(lhs, rhs)
                #expect(bytes == (expected < 0), "\(String(describing: lhs)) vs \(String(describing: rhs))")
                #expect((IndexKey.encoded(lhs) == IndexKey.encoded(rhs)) == (expected == 0))
            }
        }
    }

    @Test func randomIntegersAndDoublesOrderByValue() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            func value() -> Value {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: .int(Int64.random(in: .min ... .max, using: &random))
                case 1: .int(Int64.random(in: -(1 << 54)...(1 << 54), using: &random))
                case 2: .double(Double(Int64.random(in: -(1 << 62)...(1 << 62), using: &random)))
                default: .double(Double.random(in: -1e6...1e6, using: &random))
                }
            }
            let (a, b) = (value(), value())
            let expected = QueryReference.compare(a, b)
            let actual = IndexKey.encoded(a).lexicographicallyPrecedes(IndexKey.encoded(b))
            #expect(actual == (expected < 0), "\(a) vs \(b)")
        }
    }

    @Test func componentsAreSelfDelimiting() throws {
        for value in Self.samples {
            var key = IndexKey.encoded(value)
            let end = key.count
            key += Array("id".utf8)
            let parsed = try key.withUnsafeBytes { try IndexKey.component(in: $0, at: 0) }
            #expect(parsed.end == end)
            #expect(!parsed.truncated)
        }
    }

    /// Long strings are cut to the component's capacity; each truncated group sorts exactly
    /// where its values belong among all other entries (only the order inside it is lost).
    @Test func truncatedGroupsSitWhereTheirValuesBelong() throws {
        var random = SeededGenerator(seed: 11)
        let capacity = IndexKey.componentCapacity(fieldCount: 1)
        let alphabet: [String] = ["\0", "a", "b", "\u{1}"]
        let base = String(repeating: "x", count: capacity - 8)
        var values: [String] = []
        for _ in 0..<400 {
            var string = base
            for _ in 0..<Int.random(in: 0..<16, using: &random) { string += alphabet.randomElement(using: &random)! }
            values.append(string)
        }
        var truncatedCount = 0
        for lhs in values {
            for rhs in values {
                var left: [UInt8] = []
                var right: [UInt8] = []
                let cutLeft = IndexKey.append(.string(lhs), capacity: capacity, to: &left)
                let cutRight = IndexKey.append(.string(rhs), capacity: capacity, to: &right)
                #expect(left.count <= capacity && right.count <= capacity)
                if cutLeft { truncatedCount += 1 }
                if left == right {
                    // Same key: both truncated to one group (or the same value).
                    #expect((cutLeft && cutRight) || lhs == rhs)
                } else {
                    let expected = lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
                    #expect(
                        left.lexicographicallyPrecedes(right) == expected,
                        "\(lhs.debugDescription) vs \(rhs.debugDescription)")
                }
            }
        }
        #expect(truncatedCount > 0)
    }
}
