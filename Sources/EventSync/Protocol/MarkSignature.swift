import EventStore

/// A server's signature of a continuity mark: a keyed hash of the epoch, a seq and the
/// ``LogDigest`` there, made with a secret key that the server keeps with the epoch and never
/// sends.
///
/// Every answer that reports a digest at or below the head carries the signature of it
/// (``PullPage/signature``, ``PushResponse/signature``, ``RemoteInfo/signature``; none from a
/// server that does not sign marks), and the client sends the signature of
/// its mark back with its ``ContinuityCheck``. A server starts a new epoch only for a check
/// whose signature it made itself: a mark a client invented (past the head, or with another
/// digest) cannot rotate the epoch. A restored server still recognises the marks it signed
/// before the restore, because the key is restored with the epoch. See <doc:Sync>.
///
/// To a client the signature is opaque: it keeps it with its mark and sends it back.
public struct MarkSignature: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 64-bit signature.
    public let rawValue: UInt64

    /// Creates a signature from its value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses 16 hex digits.
    public init?(hex: String) {
        guard let value = hex64(parsing: hex) else { return nil }
        rawValue = value
    }

    /// 16 lowercase hex digits.
    public var description: String { hex64(rawValue) }
}
