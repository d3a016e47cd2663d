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
        let bytes = hex.utf8
        guard bytes.count == 32, let high = hex64(parsing: bytes.prefix(16)), let low = hex64(parsing: bytes.suffix(16))
        else { return nil }
        self.init(high: high, low: low)
    }

    /// 32 lowercase hex digits.
    public var description: String { hex64(high) + hex64(low) }

    /// Orders by the high, then the low half.
    public static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
