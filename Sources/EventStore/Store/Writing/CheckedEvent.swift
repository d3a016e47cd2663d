/// A received event checked for ingestion (names, fields, id, stamps, encoded size), with its
/// canonical encoding, so that the write path encodes it once.
///
/// A sync backend that keeps the log somewhere else than a ``Store`` (the server's PostgreSQL
/// backend) checks received events with the same rules and stores the same bytes.
package struct CheckedEvent: Sendable {
    /// The event (its seq is the sender's).
    package let event: Event
    /// Its canonical binary encoding, which holds everything but the seq.
    package let encoded: [UInt8]

    /// Checks `event` against the names, fields and `limit` on encoded bytes.
    ///
    /// - Throws: ``EventStoreError`` for an invalid event or one over the limit.
    package init(_ event: Event, limit: Int) throws {
        self.encoded = try Validation.event(event, limit: limit)
        self.event = event
    }

    /// The size of the event's encoding, in bytes: what it adds to the log.
    package var byteCount: Int { encoded.count }

    /// Throws ``EventStoreError/Code/clockSkew`` when the event's stamp is more than
    /// `maxSkewMilliseconds` ahead of `now` (milliseconds since 1970).
    package func checkClock(maxSkewMilliseconds: UInt64, now: UInt64) throws {
        try HybridLogicalClock.checkSkew(event.hlc, now: now, maxSkewMilliseconds: maxSkewMilliseconds)
    }

    /// Throws ``EventStoreError/Code/eventConflict`` unless `held`, the canonical encoding the log
    /// holds under this event's id, is this event's: the same id with other content is refused,
    /// never counted as a duplicate.
    package func checkSameContent(as held: [UInt8]) throws {
        guard held != encoded else { return }
        throw EventStoreError.conflict(
            EventIDConflict(
                id: event.id, held: EventDigest(canonicalBytes: held), received: EventDigest(canonicalBytes: encoded)))
    }
}

extension Event {
    /// Decodes an event stored as its canonical encoding (``CheckedEvent/encoded``) at `seq`.
    ///
    /// - Throws: ``EventStoreError/Code/corrupt`` for malformed bytes.
    package init(canonical bytes: [UInt8], seq: UInt64) throws {
        try self.init(decoding: bytes, seq: seq)
    }
}
