package import EventStore
package import EventSync

/// Builds a page of the log from its events in server order, as every backend answers a pull:
/// the events' JSON within the page's byte limit, and the ``EventSync/PageChecksum`` over exactly
/// those bytes (so two backends holding the same log send the same page and checksum).
package struct PageBuilder {
    package private(set) var page: EncodedPage
    private let request: PageRequest
    private var hash = FNV1a()
    private var buffer: [UInt8] = []

    /// Starts an empty page after `request.after`, for a store whose head and epoch are given.
    package init(_ request: PageRequest, head: UInt64, epoch: String) {
        self.request = request
        self.page = EncodedPage(next: request.after, head: head, epoch: epoch)
    }

    /// Adds the next event; returns whether the page takes another one (`false` when it is full
    /// by count, or when this event would pass the byte limit — it is then left out).
    package mutating func add(_ event: Event) -> Bool {
        buffer.removeAll(keepingCapacity: true)
        event.writeJSON(into: &buffer)
        if page.count > 0 {
            if page.eventsJSON.count + buffer.count + 1 > request.maxBytes { return false }
            page.eventsJSON.append(UInt8(ascii: ","))
        }
        page.eventsJSON.append(contentsOf: buffer)
        hash.combine(bytes: buffer)
        hash.combine(byte: 0x0A)
        if request.keepsEvents { page.events.append(event) }
        page.count += 1
        page.next = event.seq
        return page.count < request.limit
    }

    /// The page, with the digest of the log at its last event (``EncodedPage/next``) and the
    /// signature of that mark by `key` (none without a key, or past the head, where the log has no
    /// digest: a signed mark past the head would let a client prove a rewind that never was).
    package func finish(digest: LogDigest?, key: EpochKey?) -> EncodedPage {
        var page = page
        page.checksum = PageChecksum(rawValue: hash.state)
        page.digest = digest ?? .empty
        if let digest, page.next <= page.head {
            page.signature = key?.signature(epoch: page.epoch, seq: page.next, digest: digest)
        }
        return page
    }
}
