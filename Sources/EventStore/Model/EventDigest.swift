/// The digest of an event's content: FNV-1a 64 over its canonical binary encoding, which holds
/// everything but the event's position in a log (its id, stamp, base, item, operation, fields
/// and schema).
///
/// An ``EventID`` names exactly one event. Wherever an event is received — a push on a server,
/// a pulled page on a client — an id the log already holds is compared with the stored event,
/// byte for byte: the same content is a duplicate, other content is an
/// ``EventStoreError/Code/eventConflict``. The digest names the two versions in errors and in
/// `evstore diff`, so that people can tell them apart.
///
/// ```swift
/// let event = try await store.put("notes", id: "n1", fields: ["title": "Draft"])
/// print(event.digest)   // 16 hex digits, the same on every replica that holds this event
/// ```
public struct EventDigest: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 64-bit digest.
    public let rawValue: UInt64

    /// Creates a digest from its value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The digest of an event's canonical bytes.
    init(canonicalBytes: some Sequence<UInt8>) {
        var hash = FNV1a()
        hash.combine(bytes: canonicalBytes)
        rawValue = hash.state
    }

    /// 16 lowercase hex digits.
    public var description: String { hex64(rawValue) }
}

extension Event {
    /// The digest of the event's content (everything but ``seq``); see ``EventDigest``.
    public var digest: EventDigest { EventDigest(canonicalBytes: encoded()) }

    /// Whether `other` is the same event: equal canonical bytes (the seq is not compared).
    public func hasSameContent(as other: Event) -> Bool { encoded() == other.encoded() }
}
