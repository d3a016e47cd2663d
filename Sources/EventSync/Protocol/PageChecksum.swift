public import EventStore

/// The checksum of a page of events: FNV-1a 64 over each event's canonical JSON
/// (``EventStore/Event/jsonBytes()``) followed by a line feed, in page order.
public struct PageChecksum: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The 64-bit checksum.
    public let rawValue: UInt64

    /// Creates a checksum from its value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The checksum of `events`.
    public init(events: [Event]) {
        var hash = FNV1a()
        var buffer: [UInt8] = []
        for event in events {
            buffer.removeAll(keepingCapacity: true)
            event.writeJSON(into: &buffer)
            hash.combine(bytes: buffer)
            hash.combine(byte: 0x0A)
        }
        rawValue = hash.state
    }

    /// Parses 16 hex digits.
    public init?(hex: String) {
        guard let value = hex64(parsing: hex) else { return nil }
        rawValue = value
    }

    /// 16 lowercase hex digits.
    public var description: String { hex64(rawValue) }
}
