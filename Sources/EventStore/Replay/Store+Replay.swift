extension Store {
    /// Rebuilds the projections as they were at `point` into a scratch environment.
    ///
    /// ```swift
    /// let then = try store.replay(to: .seq(120))
    /// for item in try then.items(in: "notes") { print(item.id, item["title"] ?? nil) }
    /// ```
    public func replay(to point: ReplayPoint, progress: (@Sendable (Progress) -> Void)? = nil) throws -> ReplayedState {
        let head = try self.head()
        let through: UInt64
        switch point {
        case .seq(let seq): through = min(seq, head)
        case .hlc: through = head
        }
        do {
            let scratch = try ScratchProjections(configuration: configuration)
            let eventsApplied = try scratch.build(
                from: self, through: through, include: point.includes, progress: progress)
            return ReplayedState(point: point, eventsApplied: eventsApplied, scratch: scratch)
        } catch {
            throw EventStoreError.wrapping(error, "replay")
        }
    }

    /// The history of one item up to `point`, event by event, with what each did to each field.
    public func replaySteps(collection: String, item: String, to point: ReplayPoint = .seq(.max)) throws -> [ReplayStep]
    {
        let schemas = configuration.schemaRegistry
        let logged = try read { try $0.events(collection: collection, item: item) }.filter(point.includes)
        var state = ItemState()
        var steps: [ReplayStep] = []
        for original in logged {
            // An item's history holds only the events its items took (none held back).
            guard let event = try schemas.interpret(original) else { continue }
            let before = state.values
            let outcomes = state.apply(event, reporting: .all)
            let after = state.values
            var changes: [FieldChange] = []
            // Sets and counters the event wrote: what it changed (a removal that a concurrent
            // addition outlived is reported below as lost).
            for name in event.updates.keys where !outcomes.contains(where: { $0.field == name }) {
                changes.append(FieldChange(field: name, old: before[name], new: after[name], outcome: .set))
            }
            for outcome in outcomes {
                let change: FieldChange.Outcome
                switch outcome.kind {
                case .won: change = .set
                case .cleared: change = .cleared
                case .lost: change = .lost(to: outcome.winner?.eventID ?? event.id)
                }
                changes.append(
                    FieldChange(
                        field: outcome.field, old: before[outcome.field], new: after[outcome.field], outcome: change))
            }
            changes.sort { utf8Less($0.field, $1.field) }
            steps.append(
                ReplayStep(
                    event: event, original: event == original ? nil : original, changes: changes,
                    itemAfter: state.exists ? state.item(collection: collection, id: item) : nil))
        }
        return steps
    }

    /// Every write to the fields of one item (or to one field), oldest stamp first, each with
    /// whether it holds the field now and why — `git blame` for a field.
    ///
    /// ```swift
    /// for entry in try store.history(collection: "notes", item: "n1", field: "title") {
    ///     print(entry.won ? "✓" : " ", entry.event.id, entry.value ?? "∅", entry.reason)
    /// }
    /// ```
    public func history(collection: String, item: String, field: String? = nil) throws -> [FieldHistoryEntry] {
        let schemas = configuration.schemaRegistry
        var originals: [UInt64: Event] = [:]
        let events = try read { try $0.events(collection: collection, item: item) }.compactMap { logged -> Event? in
            let event = try schemas.interpret(logged)
            if let event, event != logged { originals[logged.seq] = logged }
            return event
        }
        let policies = schemas.policies(of: collection)
        let conflicts = try read { try $0.conflicts(collection: collection, item: item) }
        var final = ItemState()
        var known = Set<String>()
        for event in events {
            final.apply(event)
            known.formUnion(event.fields.keys)
            known.formUnion(event.updates.keys)
        }
        let fields = field.map { [$0] } ?? known.sorted(by: utf8Less)
        var entries: [FieldHistoryEntry] = []
        for name in fields {
            if let policy = policies[name] {
                var merged = Store.mergedHistory(
                    of: name, policy: policy, events: events, final: final, originals: originals)
                for index in merged.indices {
                    merged[index].outcome =
                        merged[index].update == nil
                        ? Store.outcome(of: index, among: merged, conflicts: conflicts) : .merged
                }
                entries += merged
                continue
            }
            let current = final.fields[name]
            var writes: [FieldHistoryEntry] = []
            for event in events {
                let value: Value?
                if let written = event.fields[name] {
                    value = written
                } else if event.operation != .patch {
                    value = nil
                } else {
                    continue
                }
                let won: Bool
                if let current {
                    won = value != nil && current.eventID == event.id
                } else {
                    won = value == nil && final.floor?.eventID == event.id
                }
                writes.append(
                    FieldHistoryEntry(
                        field: name, event: event, value: value, won: won, reason: "", original: originals[event.seq]))
            }
            writes.sort { $0.event.stamp < $1.event.stamp }
            for index in writes.indices {
                writes[index].reason = Store.reason(
                    for: writes[index], among: writes, current: current, floor: final.floor)
                writes[index].outcome = Store.outcome(of: index, among: writes, conflicts: conflicts)
            }
            entries.append(contentsOf: writes)
        }
        return entries
    }

    /// What became of `writes[index]` (one field's writes, by stamp): it won; it lost a conflict
    /// the merge recorded; or the next write cleared it, or beat it concurrently
    /// (``ItemState/concurrent(_:beatenBy:base:)``), or overwrote it having seen it.
    static func outcome(of index: Int, among writes: [FieldHistoryEntry], conflicts: [ConflictRecord])
        -> FieldHistoryEntry.Outcome
    {
        let entry = writes[index]
        if entry.won { return .won }
        let event = entry.event
        if let record = conflicts.first(where: { $0.field == entry.field && $0.loser.event == event.id }) {
            return .conflict(lostTo: record.winner.event)
        }
        guard let next = writes[(index + 1)...].first else { return .cleared(by: event.id) }
        if next.value == nil { return .cleared(by: next.event.id) }
        if ItemState.concurrent(event.stamp, beatenBy: next.event.stamp, base: next.event.base) {
            return .conflict(lostTo: next.event.id)
        }
        return .overwritten(by: next.event.id)
    }

    static func reason(
        for entry: FieldHistoryEntry, among writes: [FieldHistoryEntry], current: ItemState.Field?,
        floor: ItemState.Floor?
    ) -> String {
        let stamp = entry.event.stamp
        if entry.won {
            let rivals = writes.count - 1
            let what = entry.value == nil ? "cleared the field" : "holds the field"
            return rivals == 0 ? "\(what): the only write" : "\(what): the greatest stamp among \(writes.count) writes"
        }
        if let current {
            let winner = current.stamp
            if winner.hlc == stamp.hlc {
                return
                    "lost to \(current.eventID): equal clock stamps, origin \(winner.origin) orders after \(stamp.origin)"
            }
            return "superseded by \(current.eventID) stamped later (\(winner.hlc))"
        }
        if let floor {
            return
                "cleared by the \(floor.isDelete ? "delete" : "put") \(floor.eventID) stamped later (\(floor.stamp.hlc))"
        }
        return "superseded"
    }
}
