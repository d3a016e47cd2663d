/// `value` as 16 lowercase hex digits.
package func hex64(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// The value of exactly 16 hex digits (either case; no sign, no prefix), as ``hex64(_:)`` writes
/// them; `nil` for anything else.
package func hex64(parsing text: String) -> UInt64? {
    guard text.utf8.count == 16, text.utf8.allSatisfy({ $0.isHexDigit }) else { return nil }
    return UInt64(text, radix: 16)
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
