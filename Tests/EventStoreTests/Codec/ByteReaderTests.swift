import EventStoreTestSupport
import Testing

@testable import EventStore

/// The decoders' string check: it accepts exactly the bytes that are valid UTF-8, as the
/// standard library's `String(validating:as:)` does, and keeps them unchanged.
struct ByteReaderTests {
    /// Valid and invalid edges: ASCII of every length around the 8-byte word check, each
    /// multi-byte width, and invalid forms whose repair has the same length as the input
    /// (a truncated 4-byte sequence before ASCII) or not (a lone continuation byte, an overlong
    /// form, a surrogate, a code point past U+10FFFF).
    static let edges: [[UInt8]] = [
        [], Array("a".utf8), Array("abcdefg".utf8), Array("abcdefgh".utf8), Array("abcdefghi".utf8),
        Array("é".utf8), Array("한국어 텍스트".utf8), Array("😀 emoji".utf8), Array("abcdefgh한".utf8),
        [0xEF, 0xBF, 0xBD],  // U+FFFD itself is valid
        [0xEF, 0xBB, 0xBF, 0x41], [0x41, 0x00, 0x42], [0xEF, 0xBF, 0xBF],  // a BOM, NUL, U+FFFF
        [0xF0, 0x9F, 0x98, 0x41], [0x80], [0x41, 0x80, 0x41], [0xC0, 0xAF], [0xED, 0xA0, 0x80],
        [0xF4, 0x90, 0x80, 0x80], [0xFF], Array("abcdefgh".utf8) + [0xC3],
    ]

    @Test(arguments: edges) func acceptsExactlyValidUTF8(bytes: [UInt8]) {
        let expected = String(validating: bytes, as: UTF8.self)
        let decoded = bytes.withUnsafeBytes { ByteReader.string(validating: $0) }
        #expect(decoded == expected)
        if let decoded { #expect(Array(decoded.utf8) == bytes) }
        #expect(bytes.withUnsafeBytes { ByteReader.isValidUTF8($0) } == (expected != nil))
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var random = SeededGenerator(seed: 0x5EED_0F_0D)
        // Bytes drawn mostly from lead and continuation bytes, so that both valid and invalid
        // multi-byte sequences are common.
        let alphabet: [UInt8] = [
            0x41, 0x7F, 0x80, 0xBF, 0xC2, 0xC0, 0xDF, 0xE0, 0xA0, 0xED, 0xEF, 0xF0, 0x90, 0xF4, 0xF5,
        ]
        var valid = 0
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...20, using: &random)).map { _ in
                alphabet.randomElement(using: &random)!
            }
            let expected = String(validating: bytes, as: UTF8.self)
            let decoded = bytes.withUnsafeBytes { ByteReader.string(validating: $0) }
            #expect(decoded == expected, "\(bytes)")
            if expected != nil { valid += 1 }
        }
        // Both outcomes were exercised.
        #expect(valid > 100 && valid < 4_900)
    }
}
