import Foundation
import Logging
import Synchronization
import LMDB

extension Store {
    /// What ``restamp(from:)`` changed.
    public struct ReplicaIDChange: Sendable, Hashable, CustomStringConvertible {
        /// One moved event: its seq in the log, its old id and its new one.
        public struct Restamped: Sendable, Hashable {
            /// The event's seq (unchanged).
            public var seq: UInt64
            /// The id it had.
            public var from: EventID
            /// The id it has now.
            public var to: EventID
        }

        /// The replica id the store wrote under before.
        public var previous: ReplicaID
        /// The replica id the store writes under now (``previous`` when the moved events came
        /// from an older id).
        public var current: ReplicaID
        /// The id the moved events carry now.
        public var restampedUnder: ReplicaID
        /// The moved events, in log order.
        public var restamped: [Restamped]

        /// `replica A → B, N events restamped under C`.
        public var description: String {
            "replica \(previous) → \(current), \(restamped.count) events restamped under \(restampedUnder)"
        }
    }

    /// Every replica id this store has written events under: the current one first, then the
    /// ones it left (oldest first). Sync pushes the events of these ids.
    public func ownReplicaIDs() throws -> [ReplicaID] {
        try environment.read { tx in
            [try Meta.replicaID(tx, schema.meta)] + (try Meta.retiredReplicaIDs(tx, schema.meta))
        }
    }

    /// The last origin sequence the store used under its current replica id.
    public func originSequence() throws -> UInt64 {
        try environment.read { tx in try Meta.uint64(tx, schema.meta, Meta.originSequence) ?? 0 }
    }

    /// Moves this store's own events with ids from `id` on to a new replica id, and continues
    /// under a new id when `id` is the current one.
    ///
    /// A store restored from an older backup, or copied to a second device, goes on writing
    /// under ids it (or its twin) already published. When sync finds such an id holding another
    /// event elsewhere (an ``EventStoreError/Code/eventConflict``), or finds the server holding
    /// more events of this replica than the store has, the store's own events from that id on —
    /// written after the copy was made, and published nowhere — get new ids: same stamps,
    /// fields and order, a new origin. Every local write is kept; the other copy's events keep
    /// the old ids and are pulled like any other replica's.
    ///
    /// - The events moved are those of origin `id.origin` with origin sequence `id.sequence` or
    ///   more. They keep their place in the log (their seqs) and their clock stamps; each gets
    ///   the new origin and origin sequences 1, 2, 3… in log order.
    /// - When `id.origin` is the current replica id, the new id becomes current and the old one
    ///   is retired; otherwise (an older id) the new id is retired at once.
    /// - Nothing moved and `id.origin` current: the store only switches to a new id.
    /// - The projections are rebuilt (stamps changed), in the background of one exclusive
    ///   write; a crash in between is finished by the next open.
    ///
    /// This is the only rewrite of the log there is, and it touches only events that no other
    /// store acknowledged under those ids: a conflict proves the id belongs to another event
    /// there.
    ///
    /// ```swift
    /// catch let error as EventStoreError where error.code == .eventConflict {
    ///     let change = try await store.restamp(from: error.eventIDConflict!.id)
    ///     print(change)   // replica 3f…→ 9a…, 2 events restamped under 9a…
    /// }
    /// ```
    ///
    /// - Parameter id: The first id to give up.
    /// - Returns: What changed.
    /// - Throws: ``EventStoreError/Code/invalidEvent`` when `id.origin` is not one of
    ///   ``ownReplicaIDs()``; ``EventStoreError/Code/readOnly``.
    @discardableResult
    public func restamp(from id: EventID) async throws -> ReplicaIDChange {
        guard let writer else { throw EventStoreError(.readOnly, "the store is open read-only") }
        let box = ResultBox<ReplicaIDChange>()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            writer.submit(
                Writer.Request(
                    eventCount: 0, body: { _ in }, complete: { continuation.resume(with: $0) },
                    exclusive: { store in box.set(try store.performRestamp(from: id)) }))
        }
        return box.get()
    }

    /// Runs on the writer thread.
    func performRestamp(from id: EventID) throws -> ReplicaIDChange {
        let fresh = configuration.newReplicaID()
        let change = try environment.write { tx -> ReplicaIDChange in
            let meta = schema.meta
            let current = try Meta.replicaID(tx, meta)
            var retired = try Meta.retiredReplicaIDs(tx, meta)
            guard id.origin == current || retired.contains(id.origin) else {
                throw EventStoreError(.invalidEvent, "replica \(id.origin) is not one of this store's replica ids")
            }
            guard fresh != current, !retired.contains(fresh) else {
                throw EventStoreError(.invalidEvent, "the new replica id \(fresh) is already one of this store's")
            }
            var moving: [(seq: UInt64, id: EventID)] = []
            let origin = Keys.eventID(EventID(origin: id.origin, sequence: 0)).prefix(16)
            try Keys.eventID(id).withUnsafeBytes { start in
                try tx.forEach(in: schema.eventIDs, from: start) { key, value in
                    guard key.count == 24, key.starts(with: origin) else { return false }
                    var reader = ByteReader(UnsafeRawBufferPointer(rebasing: key[16...]))
                    moving.append((try Keys.seq(from: value), EventID(origin: id.origin, sequence: try reader.readUInt64())))
                    return true
                }
            }
            moving.sort { $0.seq < $1.seq }
            var change = ReplicaIDChange(previous: current, current: current, restampedUnder: fresh, restamped: [])
            for (index, entry) in moving.enumerated() {
                let newID = EventID(origin: fresh, sequence: UInt64(index) + 1)
                let key = Keys.seq(entry.seq)
                guard
                    var event = try key.withUnsafeBytes({ key in
                        try tx.value(forKey: key, in: schema.events).map { try Event(decoding: $0, seq: entry.seq) }
                    })
                else { throw EventStoreError(.corrupt, "event id \(entry.id) names seq \(entry.seq), which the log does not hold") }
                event.id = newID
                try tx.put(event.encoded(), forKey: key, in: schema.events)
                _ = try tx.delete(Keys.eventID(entry.id), in: schema.eventIDs)
                guard try tx.put(key, forKey: Keys.eventID(newID), in: schema.eventIDs, options: .noOverwrite) else {
                    throw EventStoreError(.corrupt, "event id \(newID) is already in the log")
                }
                change.restamped.append(.init(seq: entry.seq, from: entry.id, to: newID))
            }
            if id.origin == current {
                change.current = fresh
                retired.append(current)
                try Meta.setReplicaID(tx, meta, fresh)
                try Meta.setUInt64(tx, meta, Meta.originSequence, UInt64(moving.count))
            } else if !moving.isEmpty {
                retired.append(fresh)
            }
            try Meta.setRetiredReplicaIDs(tx, meta, retired)
            if !moving.isEmpty { try tx.put(Keys.seq(1), forKey: Array(Meta.rebuildNeeded.utf8), in: meta) }
            return change
        }
        identity.withLock { $0 = change.current }
        logger.warning(
            "replica id retired: this store reused ids published elsewhere (restored or copied?)",
            metadata: [
                "previous": "\(change.previous)", "current": "\(change.current)",
                "restamped": "\(change.restamped.count)", "under": "\(change.restampedUnder)",
            ])
        if !change.restamped.isEmpty { try performRebuild(progress: nil) }
        return change
    }
}
