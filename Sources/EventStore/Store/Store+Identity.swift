import Foundation
import LMDB
import Logging
import Synchronization

extension Store {
    /// What ``restamp(from:)`` or ``adopt(_:)`` changed.
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

    /// The highest origin sequence of `origin`'s events in the log (0 for none).
    public func lastSequence(of origin: ReplicaID) throws -> UInt64 {
        try environment.read { tx in try Store.lastSequence(of: origin, in: tx, schema: schema) }
    }

    /// ``lastSequence(of:)`` in `tx`.
    static func lastSequence(of origin: ReplicaID, in tx: ReadTransaction, schema: Schema) throws -> UInt64 {
        try tx.withCursor(on: schema.eventIDs) { cursor in
            let prefix = Array(Keys.eventID(EventID(origin: origin, sequence: 0)).prefix(16))
            let entry =
                try cursor.seek(atLeast: Keys.eventID(EventID(origin: origin, sequence: .max))) != nil
                ? try cursor.previous() : try cursor.last()
            guard let key = entry?.key, key.count == 24, key.starts(with: prefix) else { return 0 }
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: key[16...]))
            return try reader.readUInt64()
        }
    }

    /// The last origin sequence the store used under its current replica id.
    public func originSequence() throws -> UInt64 {
        try currentIdentity().originSequence
    }

    /// The replica id the store writes under and the last origin sequence it used under it, read
    /// together from the store (another process may have moved the store to a new id since this
    /// one last wrote).
    public func currentIdentity() throws -> (replica: ReplicaID, originSequence: UInt64) {
        try environment.read { tx in
            (try Meta.replicaID(tx, schema.meta), try Meta.uint64(tx, schema.meta, Meta.originSequence) ?? 0)
        }
    }

    /// The smallest log seq among the events ``restamp(from:)`` (events of `id.origin` from
    /// `id.sequence` on) or ``adopt(_:)`` (`id` alone, with `single`) would move; `nil` when none.
    /// Sync lowers its pushed positions to it *before* moving them, so that a crash in between
    /// never leaves a moved event behind a pushed position.
    public func firstSeqToMove(from id: EventID, single: Bool = false) throws -> UInt64? {
        try environment.read { tx in
            if single {
                return try Keys.eventID(id).withUnsafeBytes { key in
                    try tx.value(forKey: key, in: schema.eventIDs).map { try Keys.seq(from: $0) }
                }
            }
            var first: UInt64?
            let origin = Array(Keys.eventID(id).prefix(16))
            try Keys.eventID(id).withUnsafeBytes { start in
                try tx.forEach(in: schema.eventIDs, from: start) { key, value in
                    guard key.count == 24, key.starts(with: origin) else { return false }
                    let seq = try Keys.seq(from: value)
                    first = min(first ?? seq, seq)
                    return true
                }
            }
            return first
        }
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
    /// - The projections are rebuilt (stamps changed) right after, in the same exclusive turn of
    ///   the writer (writes wait; readers see the new ids with the old projections until the
    ///   rebuild's last commit); a crash in between is finished by the next writable open.
    ///
    /// This (with its clock-bound form, ``restamp(from:notAfter:)``) is the only rewrite of the
    /// log there is. Sync calls it for events the remote does not
    /// hold under those ids (a conflict proves the id names another event there; a refused push
    /// names the first event the remote lacks), and lowers its pushed positions first so that
    /// the moved events are pushed under their new ids.
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
        try await exclusive { store in try store.performRestamp(from: id, adopting: false) }
    }

    /// Moves one event of another replica to a new id of this store, so that its write
    /// survives when elsewhere its id names another event.
    ///
    /// When a store receives, under an id it holds, an event with other content — from a peer
    /// that accepted a forged id before ids were bound to content, or after both a server and
    /// the author's device were restored from backups — the store keeps the event it has: it
    /// moves it to a new id of its own (same stamp and fields, a new origin that is retired at
    /// once), and can then receive the other event and push its own copy of the write. Both
    /// writes survive and merge like any two writes.
    ///
    /// ```swift
    /// catch let error as EventStoreError where error.code == .eventConflict {
    ///     try await store.adopt(error.eventIDConflict!.id)
    /// }
    /// ```
    ///
    /// - Parameter id: The id of an event in the log whose origin is not one of
    ///   ``ownReplicaIDs()`` (use ``restamp(from:)`` for those).
    /// - Returns: What changed (``ReplicaIDChange/current`` is unchanged).
    /// - Throws: ``EventStoreError/Code/notFound`` when the log does not hold `id`;
    ///   ``EventStoreError/Code/invalidEvent`` for one of this store's own ids.
    @discardableResult
    public func adopt(_ id: EventID) async throws -> ReplicaIDChange {
        try await exclusive { store in try store.performRestamp(from: id, adopting: true) }
    }

    /// Runs on the writer thread. Moves the own events of `id.origin` from `id` on, or, when
    /// `adopting`, the one foreign event `id`; with `clockBound`, stamps the moved events anew
    /// at or below it and sets the clock back.
    func performRestamp(from id: EventID, adopting: Bool = false, clockBound: HLCTimestamp? = nil) throws
        -> ReplicaIDChange
    {
        let fresh = configuration.newReplicaID()
        var clockSetBack: HLCTimestamp?
        let change = try environment.write { tx -> ReplicaIDChange in
            let meta = schema.meta
            let current = try Meta.replicaID(tx, meta)
            var retired = try Meta.retiredReplicaIDs(tx, meta)
            let own = id.origin == current || retired.contains(id.origin)
            guard own != adopting else {
                throw EventStoreError(
                    .invalidEvent,
                    adopting
                        ? "replica \(id.origin) is one of this store's replica ids: restamp its events instead"
                        : "replica \(id.origin) is not one of this store's replica ids")
            }
            if clockBound != nil && id.origin != current {
                // The clock goes back for the current id's later stamps: it must be left too.
                throw EventStoreError(
                    .invalidEvent,
                    "replica \(id.origin) is not this store's current replica id: only its events get new stamps")
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
                    moving.append(
                        (try Keys.seq(from: value), EventID(origin: id.origin, sequence: try reader.readUInt64())))
                    return !adopting
                }
            }
            if adopting {
                guard moving.first?.id == id else { throw EventStoreError(.notFound, "the log holds no event \(id)") }
            }
            moving.sort { $0.seq < $1.seq }
            let firstStamp = try clockBound.map { try firstNewStamp(moving: moving, bound: $0, in: tx) }
            var stamps = NewStamps()
            var change = ReplicaIDChange(previous: current, current: current, restampedUnder: fresh, restamped: [])
            // A moved event's removals name the additions it saw by id: those it saw among the
            // moved events now have their new ids.
            var renamed: [EventID: EventID] = [:]
            for (index, entry) in moving.enumerated() {
                renamed[entry.id] = EventID(origin: fresh, sequence: UInt64(index) + 1)
            }
            for (index, entry) in moving.enumerated() {
                let newID = renamed[entry.id]!
                let key = Keys.seq(entry.seq)
                guard
                    var event = try key.withUnsafeBytes({ key in
                        try tx.value(forKey: key, in: schema.events).map { try Event(decoding: $0, seq: entry.seq) }
                    })
                else {
                    throw EventStoreError(
                        .corrupt, "event id \(entry.id) names seq \(entry.seq), which the log does not hold")
                }
                event.id = newID
                if let firstStamp {
                    stamps.restamp(&event, to: HLCTimestamp(rawValue: firstStamp.rawValue + UInt64(index)))
                }
                event.renameSeenAdditions(renamed)
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
            if !moving.isEmpty { try Meta.setRebuildNeeded(tx, meta, true) }
            if let firstStamp {
                let last = HLCTimestamp(rawValue: firstStamp.rawValue + UInt64(moving.count) - 1)
                try Meta.setUInt64(tx, meta, Meta.hlc, last.rawValue)
                clockSetBack = last
            }
            return change
        }
        identity.withLock { $0 = change.current }
        if let clockSetBack { clock.withLock { $0.setBack(to: clockSetBack) } }
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
