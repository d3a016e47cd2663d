/// The identity of a replica (one store): 128 random bits, created once per store and kept in it.
///
/// Replica ids order events with equal clock stamps (see ``Stamp``) and, with an origin sequence
/// number, form the globally unique ``EventID``. Written as 32 lowercase hex digits.
public struct ReplicaID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The high 64 bits.
    public let high: UInt64
    /// The low 64 bits.
    public let low: UInt64

    /// Creates a replica id from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A new random replica id.
    public static func random() -> ReplicaID {
        var generator = SystemRandomNumberGenerator()
        return ReplicaID(high: generator.next(), low: generator.next())
    }

    /// Parses 32 hex digits (either case); anything else, signs included, is refused.
    public init?(hex: String) {
        var halves: (high: UInt64, low: UInt64) = (0, 0)
        var count = 0
        for byte in hex.utf8 {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            guard count < 32 else { return nil }
            if count < 16 {
                halves.high = halves.high << 4 | UInt64(digit)
            } else {
                halves.low = halves.low << 4 | UInt64(digit)
            }
            count += 1
        }
        guard count == 32 else { return nil }
        self.init(high: halves.high, low: halves.low)
    }

    /// 32 lowercase hex digits.
    public var description: String { hex64(high) + hex64(low) }

    /// Orders by the high, then the low half.
    public static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
