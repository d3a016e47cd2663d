/// A received event checked for ingestion (names, fields, id, stamps, encoded size), with its
/// canonical encoding, so that the write path encodes it once.
package struct CheckedEvent: Sendable {
    /// The event (its seq is the sender's).
    package let event: Event
    /// Its canonical binary encoding, which holds everything but the seq.
    let encoded: [UInt8]

    /// Checks `event` against the names, fields and `limit` on encoded bytes.
    ///
    /// - Throws: ``EventStoreError`` for an invalid event or one over the limit.
    init(_ event: Event, limit: Int) throws {
        self.encoded = try Validation.event(event, limit: limit)
        self.event = event
    }

    /// The size of the event's encoding, in bytes: what it adds to the log.
    package var byteCount: Int { encoded.count }
}
