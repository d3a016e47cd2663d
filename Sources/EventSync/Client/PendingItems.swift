import EventStore

/// Counts the distinct items among the events a remote has not acknowledged ("3 items waiting to
/// sync": a note edited 40 times offline is one item), reading each event once.
///
/// It remembers, per pending item, the seq of its latest event, and a queue of (seq, item) in log
/// order. New events are read from where it stopped; when the pushed position moves forward,
/// entries at or below it leave the front of the queue (an item leaves only if no later event of
/// it is pending). When the position moves back (a new epoch, events moved to a new replica id),
/// it starts over from the position.
struct PendingItems {
    private struct ItemKey: Hashable {
        var collection: String
        var item: String
    }

    private var pushed: UInt64 = 0
    private var scanned: UInt64 = 0
    private var latest: [ItemKey: UInt64] = [:]
    private var queue: [(seq: UInt64, key: ItemKey)] = []
    private var front = 0

    /// The pending items after the remote acknowledged the log up to `cursor.pushed`: items of
    /// the events after it, and of the relays it deferred.
    mutating func count(_ reader: StoreReader, cursor: SyncCursor) throws -> Int {
        if cursor.pushed < pushed || cursor.pushed > scanned {
            self = PendingItems()
            pushed = cursor.pushed
            scanned = cursor.pushed
        }
        acknowledge(through: cursor.pushed)
        try reader.forEachEvent(from: scanned + 1) { event in
            let key = ItemKey(collection: event.collection, item: event.item)
            latest[key] = event.seq
            queue.append((event.seq, key))
            scanned = event.seq
            return true
        }
        var relayed = Set<ItemKey>()
        for seq in cursor.deferredRelays {
            guard let event = try reader.event(at: seq) else { continue }
            let key = ItemKey(collection: event.collection, item: event.item)
            if latest[key] == nil { relayed.insert(key) }
        }
        return latest.count + relayed.count
    }

    private mutating func acknowledge(through seq: UInt64) {
        pushed = seq
        while front < queue.count, queue[front].seq <= seq {
            let (entrySeq, key) = queue[front]
            if latest[key] == entrySeq { latest[key] = nil }
            front += 1
        }
        if front > 4096, front * 2 > queue.count {
            queue.removeFirst(front)
            front = 0
        }
    }
}
