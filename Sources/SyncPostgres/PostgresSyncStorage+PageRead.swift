import EventStore
import EventSync
import EventSyncService
import Logging
import NIOCore
import PostgresNIO

extension PostgresSyncStorage {
    /// A page of the log after `request.after`.
    ///
    /// The first statement reads the store's row, the event at `after` (for the digest of an
    /// empty page) and about as many events after it as the page's byte limit takes (see
    /// ``PageSizeEstimates``). When they leave the page short of its limits and the log goes on,
    /// the next statements read on from the last event, no further than the head the first one
    /// reported, and only while the store's epoch is the one it reported: the page is what one
    /// statement reading every event would have made.
    ///
    /// Seqs are dense, so each statement names the range of seqs it reads, not only where it
    /// starts: whatever plan PostgreSQL picks (also on a table it has no statistics of yet, where
    /// it may scan an index range and sort it), it reads no more rows than the page asks for.
    func readPage(_ name: String, _ request: PageRequest, logger: Logger) async throws -> EncodedPage {
        let from = Int64(bitPattern: max(request.after, 1))
        let first = PageSizeEstimates.rows(
            remainingEvents: request.limit, remainingBytes: request.maxBytes, average: pageSizes.average(for: name))
        // The event at `after` comes first, when there is one.
        let count = Int64(first + (request.after >= 1 ? 1 : 0))
        let (end, overflow) = from.addingReportingOverflow(count)
        let until = overflow ? Int64.max : end
        let rows = try await client.query(
            """
            SELECT s.epoch, s.epoch_key, s.head, e.seq, e.digest, e.body
            FROM evstore_stores s
            LEFT JOIN LATERAL (
                SELECT seq, digest, body FROM evstore_events
                WHERE store = s.name AND seq >= \(from) AND seq < \(until) ORDER BY seq LIMIT \(count)
            ) e ON true
            WHERE s.name = \(name)
            """, logger: logger)
        var read = PageRead(request)
        var key: EpochKey?
        for try await (epoch, epochKey, head, seq, eventDigest, body) in rows.decode(
            (String, ByteBuffer?, Int64, Int64?, Int64?, ByteBuffer?).self)
        {
            if read.builder == nil {
                read.builder = PageBuilder(request, head: UInt64(bitPattern: head), epoch: epoch)
                key = try PostgresSyncStorage.epochKey(epochKey)
            }
            try read.take(seq, eventDigest, body)
        }
        guard let started = read.builder else { throw SyncError(.notFound, "no store named \(name.debugDescription)") }
        let (epoch, head) = (started.page.epoch, started.page.head)
        // Whether a statement names the end of its range (see above); a gap in the seqs, which
        // pushes never leave, would make it read on to the head instead.
        var bounded = true
        while !read.full, read.last < head, let page = read.builder?.page {
            let wanted = PageSizeEstimates.rows(
                remainingEvents: request.limit - page.count, remainingBytes: request.maxBytes - page.eventsJSON.count,
                average: page.averageEventBytes ?? pageSizes.average(for: name))
            guard wanted > 0 else { break }
            let after = read.last
            let upper = bounded ? min(head, after + UInt64(wanted)) : head
            let rows = try await client.query(
                """
                SELECT s.epoch, e.seq, e.digest, e.body
                FROM evstore_stores s
                LEFT JOIN LATERAL (
                    SELECT seq, digest, body FROM evstore_events
                    WHERE store = s.name AND seq > \(Int64(bitPattern: after)) AND seq <= \(Int64(bitPattern: upper))
                    ORDER BY seq LIMIT \(Int64(wanted))
                ) e ON true
                WHERE s.name = \(name)
                """, logger: logger)
            let before = read.events
            var sameEpoch = false
            for try await (current, seq, eventDigest, body) in rows.decode((String, Int64?, Int64?, ByteBuffer?).self) {
                // A store given a new epoch since the first statement (or gone) ends the page there.
                sameEpoch = current == epoch
                if sameEpoch { try read.take(seq, eventDigest, body) }
            }
            let got = UInt64(read.events - before)
            guard sameEpoch, got > 0 || bounded else { break }
            if got < upper - after { bounded = false }
        }
        pageSizes.count(read: read.events)
        let page = (read.builder ?? started).finish(digest: read.digest, key: key)
        pageSizes.record(page, for: name)
        return page
    }

    /// The rows of a page read, taken one by one.
    private struct PageRead {
        let request: PageRequest
        var builder: PageBuilder?
        /// The digest of the log at the page's last event (or at `after`, for an empty page).
        var digest = LogDigest.empty
        /// Whether the page takes no more events.
        var full = false
        /// The events after `after` read, and the seq of the last one.
        var events = 0
        var last: UInt64

        init(_ request: PageRequest) {
            self.request = request
            last = request.after
        }

        /// Takes one row: the event at `after`, an event after it, or none (a store without
        /// events there).
        mutating func take(_ seq: Int64?, _ eventDigest: Int64?, _ body: ByteBuffer?) throws {
            guard let seq = seq.map(UInt64.init(bitPattern:)), let eventDigest, let body else { return }
            if seq <= request.after {
                digest = LogDigest(rawValue: UInt64(bitPattern: eventDigest))
                return
            }
            events += 1
            last = seq
            guard !full else { return }
            let event = try Event(canonical: Array(buffer: body), seq: seq)
            full = !(builder!.add(event))
            if builder!.page.next == seq { digest = LogDigest(rawValue: UInt64(bitPattern: eventDigest)) }
        }
    }
}
