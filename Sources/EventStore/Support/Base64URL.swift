/// Unpadded base64url (RFC 4648 §5), for tokens that travel in URLs and command lines, such as
/// query cursors. Hand-written: Foundation's base64 needs three string replacements per token
/// to become URL-safe, which cost a tenth of a small query.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The digit each byte stands for, or 0xFF for a byte outside the alphabet.
    private static let digits: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }()

    /// The text of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        let count = (bytes.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: count) { output in
            var out = 0
            var index = 0
            while index + 3 <= bytes.count {
                let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output[out] = alphabet[Int(chunk >> 18)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[out + 2] = alphabet[Int(chunk >> 6 & 63)]
                output[out + 3] = alphabet[Int(chunk & 63)]
                out += 4
                index += 3
            }
            let rest = bytes.count - index
            if rest > 0 {
                let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                output[out] = alphabet[Int(chunk >> 18)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                out += 2
                if rest == 2 {
                    output[out] = alphabet[Int(chunk >> 6 & 63)]
                    out += 1
                }
            }
            return out
        }
    }

    /// The bytes of `text`, or `nil` when it is not unpadded base64url (a character outside the
    /// alphabet, a length no encoding has, or nonzero bits after the last byte).
    static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        let symbols = Array(text.utf8)
        guard symbols.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(symbols.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            let digit = digits[Int(symbol)]
            guard digit != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(digit)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { return nil }
        return bytes
    }
}
