import LMDB

/// Clock recovery: events stamped while the device's clock ran ahead get new stamps.
extension Store {
    /// Moves this store's own events from `id` on to a new replica id, as ``restamp(from:)``
    /// does, and gives them new stamps no later than `bound`: for events stamped while the
    /// device's clock ran ahead, which a sync server refuses (``EventStoreError/Code/clockSkew``)
    /// and which, left alone, would also make every later write of the store run ahead.
    ///
    /// The moved events keep their order and fields; their stamps follow on from the latest
    /// stamp of the rest of the log (or the present, when the physical clock is not past
    /// `bound`), one apart. The store's clock is set back to the last of them, under the new
    /// current id. The projections are rebuilt, as after ``restamp(from:)``.
    ///
    /// ```swift
    /// // The server accepts stamps up to its clock plus its skew bound.
    /// try await store.restamp(from: refused.id, notAfter: HLCTimestamp(physical: serverBound, logical: .max))
    /// ```
    ///
    /// - Parameters:
    ///   - id: The first id to give up: one of the current replica id's.
    ///   - bound: The latest stamp the moved events may get.
    /// - Returns: What changed.
    /// - Throws: ``EventStoreError/Code/clockSkew`` when another event of the log is stamped
    ///   after `bound`, or the moved events do not fit below it (nothing changes);
    ///   ``EventStoreError/Code/invalidEvent`` when `id.origin` is not the current replica id,
    ///   or the events to move are not all stamped after every other event of the log;
    ///   ``EventStoreError/Code/readOnly``.
    @discardableResult
    public func restamp(from id: EventID, notAfter bound: HLCTimestamp) async throws -> ReplicaIDChange {
        try await exclusive { store in try store.performRestamp(from: id, clockBound: bound) }
    }

    /// The first of the new stamps for `moving` under `bound`: just after the latest stamp of
    /// every other event of the log, and not before the present (taken no later than `bound`).
    /// The last of them is one before the first when nothing moves.
    ///
    /// - Throws: ``EventStoreError/Code/clockSkew`` when another event is stamped after `bound`
    ///   or the new stamps pass it.
    func firstNewStamp(moving: [(seq: UInt64, id: EventID)], bound: HLCTimestamp, in tx: WriteTransaction)
        throws -> HLCTimestamp
    {
        let moved = Set(moving.map(\.seq))
        var earliestMoved = HLCTimestamp(rawValue: .max)
        var latestKept = HLCTimestamp.zero
        try tx.forEach(in: schema.events) { key, value in
            let seq = try Keys.seq(from: key)
            let event = try Event(decoding: value, seq: seq)
            guard !moved.contains(seq) else {
                earliestMoved = min(earliestMoved, event.hlc)
                return true
            }
            latestKept = max(latestKept, event.hlc)
            guard event.hlc <= bound else {
                throw EventStoreError(
                    .clockSkew,
                    "event \(event.id) (seq \(seq)) is stamped \(event.hlc), after \(bound), and is not one of the events to "
                        + "stamp anew: the store's clock cannot go back below it")
            }
            return true
        }
        // Only a run stamped after everything else: what ran ahead. (The bases that name moved
        // events are then exactly those past every kept stamp; see NewStamps.)
        guard moving.isEmpty || earliestMoved > latestKept else {
            throw EventStoreError(
                .invalidEvent,
                "the events from \(moving[0].id) on are not all stamped after the rest of the log (\(earliestMoved) ≤ "
                    + "\(latestKept)): only events stamped ahead of everything else get new stamps")
        }
        let latest = max(
            latestKept, HLCTimestamp(physical: min(configuration.physicalClock(), bound.physical), logical: 0))
        guard bound.rawValue - latest.rawValue > UInt64(moving.count) else {
            throw EventStoreError(
                .clockSkew, "\(moving.count) events do not fit between \(latest) and \(bound): wait, then try again")
        }
        return HLCTimestamp(rawValue: latest.rawValue + 1)
    }
}

/// The new stamps given so far to events stamped anew, in log order, so that a later one's
/// ``Event/base`` (the greatest stamp of its item that its writer had seen, often an earlier
/// moved event's) follows its stamp.
struct NewStamps {
    private var old: [HLCTimestamp] = []
    private var new: [HLCTimestamp] = []

    /// Gives `event` the stamp `stamp`, and a base that names the same write as before: the new
    /// stamp of the latest event moved before it whose old stamp is not after its base (a base
    /// below every moved event's names an event that keeps its stamp), never after `stamp`.
    mutating func restamp(_ event: inout Event, to stamp: HLCTimestamp) {
        // Old stamps rise in log order (one replica's clock); the last one not after the base.
        var low = 0
        var high = old.count
        while low < high {
            let middle = (low + high) / 2
            if old[middle] <= event.base { low = middle + 1 } else { high = middle }
        }
        if low > 0 { event.base = new[low - 1] }
        event.base = min(event.base, stamp)
        old.append(event.hlc)
        new.append(stamp)
        event.hlc = stamp
    }
}
