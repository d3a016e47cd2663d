/// The merged state of one item: the pure, order-independent fold of its events.
///
/// The merge rule (last writer wins per field, on ``Stamp``):
/// - each field holds the write with the greatest stamp;
/// - a `put` or `delete` raises the item's *floor* to its stamp: every field written below the
///   floor is gone (a `put` then writes its own fields at the floor);
/// - the item exists while it has a field, or while its floor is a `put`.
///
/// Fields merged as add-wins sets or counters (see ``MergePolicy``) are kept in ``sets`` and
/// ``counters`` instead, from the events' ``Event/updates`` (see `ItemState+Merge`).
///
/// Because every step keeps a maximum, a union or a sum, the state depends only on the **set**
/// of events applied, never on their order: replicas that received the same events hold the
/// same bytes.
struct ItemState: Sendable, Hashable {
    /// One live field: its value and the write that set it.
    struct Field: Sendable, Hashable {
        var value: Value
        var stamp: Stamp
        var sequence: UInt64
        var base: HLCTimestamp

        var eventID: EventID { EventID(origin: stamp.origin, sequence: sequence) }
    }

    /// The greatest `put`/`delete` below which fields are cleared.
    struct Floor: Sendable, Hashable {
        var stamp: Stamp
        var sequence: UInt64
        var base: HLCTimestamp
        var isDelete: Bool

        var eventID: EventID { EventID(origin: stamp.origin, sequence: sequence) }
    }

    /// The greatest stamp of any event applied.
    var version: Stamp?
    var floor: Floor?
    var fields: [String: Field] = [:]
    /// Fields merged as add-wins sets.
    var sets: [String: SetField] = [:]
    /// Fields merged as counters.
    var counters: [String: CounterField] = [:]

    /// Whether the item exists (is not deleted and was ever written): it has a field, or its
    /// floor is a `put`, or a set or counter with content was written after its last delete.
    var exists: Bool {
        if !fields.isEmpty || (floor.map { !$0.isDelete } ?? false) { return true }
        guard !sets.isEmpty || !counters.isEmpty else { return false }
        return hasMergedContent(after: floor?.stamp)
    }

    /// What happened to one field when an event was applied, for conflict records and history.
    struct Outcome {
        enum Kind {
            /// The event's value replaced `previous` (or set a new field).
            case won
            /// The event's write lost to a newer write (`winner`).
            case lost
            /// A `put`/`delete` cleared the field (`previous` was its value).
            case cleared
        }
        var field: String
        var kind: Kind
        /// The write that lost: the overwritten or cleared field, or the event's own value.
        var loser: Field?
        /// The write that won, when the event lost; when the event won, the event's own write.
        var winner: Field?
        /// Whether the winning write is a `put` or `delete` that cleared the field.
        var winnerClears: Bool
        /// Whether the losing and winning writes were concurrent (neither had seen the other).
        var concurrent: Bool
        /// Whether the losing write cleared the field (a set's removal that concurrent
        /// additions outlived).
        var loserClears = false
    }

    /// Whether a write stamped `loser` and the write that beat it (stamped `winner`, made with
    /// the item seen as of `base`) were concurrent: neither had seen the other. A replica sees
    /// its own writes, so two writes of one origin never are. The one rule behind conflict
    /// records and every explanation of a conflict.
    static func concurrent(_ loser: Stamp, beatenBy winner: Stamp, base: HLCTimestamp) -> Bool {
        loser.origin != winner.origin && loser.hlc > base
    }

    /// Which outcomes ``apply(_:reporting:)`` returns.
    enum OutcomeReport {
        /// None.
        case none
        /// Those between concurrent writes: what conflict records are made of.
        case conflicts
        /// Every field the event touched (a replay's explanation).
        case all
    }

    /// Applies `event` and reports what happened to the fields it touched (see
    /// ``OutcomeReport``).
    @discardableResult
    mutating func apply(_ event: Event, reporting: OutcomeReport = .none) -> [Outcome] {
        let stamp = event.stamp
        var outcomes: [Outcome] = []
        /// Records that `winner` beat `loser` (none: a new field) at field `name`, when
        /// `reporting` asks for such an outcome. The writes were concurrent when the loser is
        /// newer than what the winner's writer had seen (its base).
        func report(_ name: String, _ kind: Outcome.Kind, loser: Field?, winner: Field, winnerClears: Bool = false) {
            guard reporting != .none else { return }
            let concurrent = isConcurrent(loser, winner)
            guard reporting == .all || concurrent else { return }
            outcomes.append(
                Outcome(
                    field: name, kind: kind, loser: loser, winner: winner, winnerClears: winnerClears,
                    concurrent: concurrent))
        }
        /// Whether `loser` (none: a new field) and `winner` were concurrent writes.
        func isConcurrent(_ loser: Field?, _ winner: Field) -> Bool {
            loser.map { ItemState.concurrent($0.stamp, beatenBy: winner.stamp, base: winner.base) } ?? false
        }
        /// Whether `reporting` asks for the outcome of `winner` beating `loser`.
        func reports(loser: Field?, winner: Field) -> Bool {
            reporting == .all || (reporting == .conflicts && isConcurrent(loser, winner))
        }
        if version.map({ stamp > $0 }) ?? true { version = stamp }

        if event.operation != .patch, floor.map({ stamp > $0.stamp }) ?? true {
            let floorWrite = Field(value: .null, stamp: stamp, sequence: event.id.sequence, base: event.base)
            floor = Floor(
                stamp: stamp, sequence: event.id.sequence, base: event.base, isDelete: event.operation == .delete)
            // Clear every field written below the new floor: most often all of them, which
            // empties the table without hashing a name.
            var kept = 0
            for (name, field) in fields {
                guard field.stamp < stamp else {
                    kept += 1
                    continue
                }
                if reports(loser: field, winner: floorWrite), !event.fields.keys.contains(name) {
                    report(name, .cleared, loser: field, winner: floorWrite, winnerClears: true)
                }
            }
            if kept == 0 {
                // A new table with room for the event's fields (`removeAll(keepingCapacity:)`
                // runs unspecialized: see `Dictionary.reserving`).
                fields = .reserving(event.fields.count)
            } else if kept < fields.count {
                fields = fields.filter { $0.value.stamp >= stamp }
            }
        }

        if !event.updates.isEmpty { outcomes += applyMerged(event, collectOutcomes: reporting != .none) }
        for (name, value) in event.fields {
            let write = Field(value: value, stamp: stamp, sequence: event.id.sequence, base: event.base)
            // Written first, so that the usual case (the write wins) hashes the name once; a
            // write that loses is taken back.
            if let existing = fields.updateValue(write, forKey: name) {
                if existing.stamp > stamp {
                    fields.updateValue(existing, forKey: name)
                    report(name, .lost, loser: write, winner: existing)
                    continue
                }
                report(name, .won, loser: existing, winner: write)
            } else if let floor, stamp < floor.stamp {
                // Written below the floor: a later put or delete already cleared it.
                fields.removeValue(forKey: name)
                let cleared = Field(value: .null, stamp: floor.stamp, sequence: floor.sequence, base: floor.base)
                report(name, .lost, loser: write, winner: cleared, winnerClears: true)
            } else {
                report(name, .won, loser: nil, winner: write)
            }
        }
        return outcomes
    }

    /// The item's live field values.
    var values: [String: Value] {
        var values = fields.mapValues(\.value)
        if !sets.isEmpty || !counters.isEmpty { mergedValues(into: &values) }
        return values
    }

    /// One field's live value.
    func value(of name: String) -> Value? {
        if !sets.isEmpty || !counters.isEmpty { return mergedValue(of: name) }
        return fields[name]?.value
    }
}
