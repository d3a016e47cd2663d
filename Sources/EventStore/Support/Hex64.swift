/// `value` as 16 lowercase hex digits.
package func hex64(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}

/// The value of exactly 16 hex digits (either case; no sign, no prefix), as ``hex64(_:)`` writes
/// them; `nil` for anything else.
package func hex64(parsing text: String) -> UInt64? { hex64(parsing: text.utf8) }

/// The value of exactly 16 UTF-8 bytes of hex digits (see ``hex64(parsing:)-(String)``).
package func hex64(parsing bytes: some Collection<UInt8>) -> UInt64? {
    guard bytes.count == 16 else { return nil }
    var value: UInt64 = 0
    for byte in bytes {
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
        default: return nil
        }
        value = value << 4 | UInt64(digit)
    }
    return value
}
