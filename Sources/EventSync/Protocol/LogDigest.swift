public import EventStore

/// A running digest of a server log: the digest at seq *n* is FNV-1a 64 over the ids and the
/// content digests (``EventStore/EventDigest``) of the events at seqs 1…*n*, in order. Two logs
/// with equal digests at *n* hold the same events at 1…*n* — the same ids *and* the same
/// content, so a log rewound and then regrown with other events under reused ids (a restored
/// server, then a restored replica pushing again) does not pass for the old one.
///
/// Servers report the digest at the end of every page and push; clients keep the highest one
/// they saw (the continuity *mark*) and send it back with every request. A server whose log no
/// longer matches a client's mark has been restored from an older copy (or lost commits), and
/// starts a new epoch. See <doc:Sync>.
public struct LogDigest: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 64-bit digest.
    public let rawValue: UInt64

    /// Creates a digest from its value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The digest of the empty log (seq 0): the FNV-1a 64 offset basis.
    public static let empty = LogDigest(rawValue: FNV1a.offsetBasis)

    /// The digest after appending `event` to a log whose digest is `self`.
    public func appending(_ event: Event) -> LogDigest {
        var hash = FNV1a(state: rawValue)
        hash.combine(event.id.origin.high)
        hash.combine(event.id.origin.low)
        hash.combine(event.id.sequence)
        hash.combine(event.digest.rawValue)
        return LogDigest(rawValue: hash.state)
    }

    /// Parses 16 hex digits.
    public init?(hex: String) {
        guard let value = hex64(parsing: hex) else { return nil }
        rawValue = value
    }

    /// 16 lowercase hex digits.
    public var description: String { hex64(rawValue) }
}
