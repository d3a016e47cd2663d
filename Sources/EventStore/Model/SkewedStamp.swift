/// A stamp further ahead of a clock than its skew bound allows: the cause of an
/// ``EventStoreError/Code/clockSkew``.
///
/// ``bound`` is the latest physical time the refusing clock took at that moment (its clock plus
/// the skew bound). A store whose own events were stamped later, while its device's clock ran
/// ahead, can give them new stamps at or below it (``Store/restamp(from:notAfter:)``).
///
/// ```swift
/// catch let error as EventStoreError where error.code == .clockSkew {
///     print(error.skewedStamp?.bound ?? 0)
/// }
/// ```
public struct SkewedStamp: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stamp refused.
    public var stamp: HLCTimestamp
    /// The latest physical time (milliseconds since 1970) a stamp could carry to be taken.
    public var bound: UInt64

    /// Creates a record of a refused stamp.
    public init(stamp: HLCTimestamp, bound: UInt64) {
        self.stamp = stamp
        self.bound = bound
    }

    /// `stamp STAMP, accepted through MILLISECONDS`.
    public var description: String { "stamp \(stamp), accepted through \(bound)" }
}

extension EventStoreError {
    /// The refused stamp behind this error, when it is a ``Code/clockSkew``.
    public var skewedStamp: SkewedStamp? { cause as? SkewedStamp }
}
