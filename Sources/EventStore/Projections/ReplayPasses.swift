import LMDB

/// How a replay that holds item records in memory (``ReplayRecords``) reads a log whose items
/// do not all fit there: in passes over the log, each applying the events of the items in one
/// key range (``ItemKeyRange``), so that each pass holds its items' records, indexes them and
/// writes each once.
///
/// Without passes, a log of more items than ``Store/Configuration/replayRecordLimit`` is
/// replayed by reading, decoding, encoding and writing an item's record for each event, and
/// every chunk of the replay then rewrites pages all over the items tree. A pass reads the whole
/// log but decodes only its own events (``LogReadAhead`` picks them by the item key in their
/// stored bytes, ``Event/itemKey(ofEncoded:into:)``), and its records land after the previous
/// passes' in key order.
///
/// An item's events keep their log order, and an item's projection depends on its own events
/// only, so the passes build what one pass builds. Two things tie items together and rule
/// passes out (``plan(items:events:tx:limit:byteLimit:)`` then plans one): custom projections,
/// which see every event in log order, and upcasters that can move an event to another item
/// (``SchemaRegistry/keepsItemKeys``).
struct ReplayPasses: Sendable, Hashable {
    /// The key ranges, one per pass, in key order; together they hold every item key.
    var ranges: [ItemKeyRange]

    /// One pass over every item.
    static let single = ReplayPasses(ranges: [.all])

    /// The share of the held records' limit a pass plans for: the estimate below counts a
    /// generation's items, which can be fewer than the log makes.
    private static let itemShare = (numerator: 7, denominator: 8)

    /// The most passes: each reads the whole log, so a log of many times the bytes a pass holds
    /// is better read in passes that do not hold all their items (they write the records of
    /// their range, which stays local) than read again and again.
    static let maximumCount = 32

    /// Plans the passes of a replay that holds at most `limit` item records and `byteLimit` bytes
    /// of events: enough passes that each holds about seven eighths of `limit` of the items
    /// `items` holds (a projection generation's items, which estimate those the log makes) and at
    /// most `byteLimit` of the bytes of `events` (the log, whose pages hold more than its events'
    /// bytes), at most ``maximumCount``, with bounds at even counts of `items`' records. One pass
    /// when that is enough or when `items` holds fewer than two records a pass.
    static func plan(
        items: Database, events: Database, tx: ReadTransaction, limit: Int, byteLimit: Int
    ) throws -> ReplayPasses {
        var records = 0
        try ItemRecord.forEach(in: items, tx: tx) { _, _ in
            records += 1
            return true
        }
        let perPass = max(1, limit * itemShare.numerator / itemShare.denominator)
        let wanted = max(
            (records + perPass - 1) / perPass,
            (try tx.statistics(of: events).bytes + byteLimit - 1) / max(1, byteLimit))
        let count = min(wanted, maximumCount)
        guard count > 1, records >= count * 2 else { return .single }
        // The i-th bound at the (i × records / count)-th record: ranges differ by one record at
        // most, so none holds more than `perPass` when the passes' count is the items'.
        var bounds: [[UInt8]] = []
        var seen = 0
        try ItemRecord.forEach(in: items, tx: tx) { key, _ in
            if seen == (bounds.count + 1) * records / count { bounds.append(Array(key)) }
            seen += 1
            return bounds.count < count - 1
        }
        var ranges: [ItemKeyRange] = []
        var lower: [UInt8]?
        for bound in bounds {
            ranges.append(ItemKeyRange(lower: lower, upper: bound))
            lower = bound
        }
        ranges.append(ItemKeyRange(lower: lower, upper: nil))
        return ReplayPasses(ranges: ranges)
    }
}
