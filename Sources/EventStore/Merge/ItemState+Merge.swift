/// Add-wins sets and counters in an item's state (see ``MergePolicy``).
///
/// The state is a pure function of the events; the declared policies only decide how a local
/// change becomes an event (``eventParts(for:policies:base:incrementsSince:)``):
/// - A set's elements are its last-writer-wins value (a whole list written by a replica that
///   did not declare the field a set, or before it was declared) without the elements removals
///   took from that list, then the elements additions added, each identified by the event that
///   made it, without those removals took. A removal names the additions its writer had seen.
/// - A counter's value is its last-writer-wins value, when it has one (an integer), plus every
///   increment.
/// - `put` and `delete` floors clear the last-writer-wins value, not the additions and
///   increments: the replica that writes a `put` or `delete` turns it into removals of the
///   elements it holds and the decrement of the count, so additions and increments it had not
///   seen survive it. They show while the item exists; a set with elements or a counter other
///   than zero, updated after the item's last delete, makes it exist again.
extension ItemState {
    /// Applies the event's updates of sets and counters.
    mutating func applyMerged(_ event: Event, collectOutcomes: Bool) -> [Outcome] {
        let stamp = event.stamp
        let addition = SetField.Addition(stamp: stamp, sequence: event.id.sequence)
        var outcomes: [Outcome] = []
        for (name, update) in event.updates {
            if let increment = update.increment {
                var counter = counters[name] ?? CounterField(touched: stamp)
                counter.sum &+= increment
                counter.touched = max(counter.touched, stamp)
                counters[name] = counter
                continue
            }
            var set = sets[name] ?? SetField(touched: stamp)
            set.touched = max(set.touched, stamp)
            for element in update.add { set.add(element, by: addition) }
            var outlived: (element: Value, addition: SetField.Addition)?
            for removal in update.remove {
                let remaining = set.remove(removal.element, seen: removal.seen)
                if outlived == nil, let newest = remaining.last { outlived = (removal.element, newest) }
            }
            sets[name] = set
            if collectOutcomes, let outlived {
                // A concurrent addition outlived the removal: add wins.
                let winner = Field(
                    value: outlived.element, stamp: outlived.addition.stamp, sequence: outlived.addition.sequence,
                    base: .zero)
                let loser = Field(value: outlived.element, stamp: stamp, sequence: event.id.sequence, base: event.base)
                outcomes.append(
                    Outcome(
                        field: name, kind: .lost, loser: loser, winner: winner, winnerClears: false, concurrent: true,
                        loserClears: true))
            }
        }
        return outcomes
    }

    /// The distinct elements (by their encoded bytes) of a list written whole: an array's
    /// elements, in order, or the value itself.
    static func elements(of value: Value) -> [Value] {
        guard case .array(let elements) = value else { return [value] }
        var seen = Set<[UInt8]>()
        return elements.filter { seen.insert($0.encodedBytes).inserted }
    }

    /// One element of a set as it shows, with what holds it there: its live additions and,
    /// for an element of the field's own list, that list's write.
    struct SetEntry {
        var value: Value
        var key: [UInt8]
        /// The writes that hold it, each with its stamp.
        var holders: [(id: EventID, stamp: Stamp)]
    }

    /// The elements of set field `name` as they show, in order (see the extension's overview).
    func setEntries(_ name: String) -> [SetEntry] {
        let set = sets[name]
        var entries: [SetEntry] = []
        var shown = Set<[UInt8]>()
        if let own = fields[name] {
            for element in ItemState.elements(of: own.value) {
                let key = element.encodedBytes
                guard set.map({ !$0.isRemoved(key, own.eventID) }) ?? true, shown.insert(key).inserted else { continue }
                let additions = set?.live(key).map { ($0.eventID, $0.stamp) } ?? []
                entries.append(SetEntry(value: element, key: key, holders: [(own.eventID, own.stamp)] + additions))
            }
        }
        for element in set?.values ?? [] {
            let key = element.encodedBytes
            guard shown.insert(key).inserted else { continue }
            entries.append(SetEntry(value: element, key: key, holders: set!.live(key).map { ($0.eventID, $0.stamp) }))
        }
        return entries
    }

    /// Whether a set has elements, or a counter a value other than zero, updated after `stamp`
    /// (the item's last delete; any, when `nil`).
    func hasMergedContent(after stamp: Stamp?) -> Bool {
        func after(_ touched: Stamp) -> Bool { stamp.map { touched > $0 } ?? true }
        return sets.values.contains { after($0.touched) && !$0.isEmpty }
            || counters.values.contains { after($0.touched) && $0.sum != 0 }
    }

    /// Adds the values of sets and counters to `values` (which holds the other fields).
    func mergedValues(into values: inout [String: Value]) {
        for name in Set(sets.keys).union(counters.keys) {
            values[name] = mergedValue(of: name)
        }
    }

    /// A set's elements or a counter's value, for a field with set or counter state (`nil`
    /// for other fields, a set without elements or a list of its own, and a counter at zero
    /// without a value of its own).
    func mergedValue(of name: String) -> Value? {
        if sets[name] != nil {
            let entries = setEntries(name)
            if entries.isEmpty { return fields[name] == nil ? nil : .array([]) }
            return .array(entries.map(\.value))
        }
        if let counter = counters[name] {
            let own = fields[name]?.value
            guard counter.sum != 0 else { return own }
            return .int((own?.intValue ?? 0) &+ counter.sum)
        }
        return fields[name]?.value
    }

    /// The fields and updates of the event a local change becomes, against this state: what
    /// the change writes to sets and counters (whole values or ``FieldEdit``s) becomes the
    /// additions, removals and increment that take them from what was read to what was
    /// written; a `put` that leaves a set or counter out, and a `delete`, empty it.
    ///
    /// - Parameters:
    ///   - policies: The collection's merge policies (fields not named: last writer wins).
    ///   - base: The item version the change was made from (``Change/base``; `nil`: this
    ///     state). Additions stamped later are neither removed nor counted as seen, and a
    ///     counter is compared with its value then.
    ///   - incrementsSince: What increments stamped after `base` added to a counter (asked only
    ///     when `base` is older than this state).
    /// - Throws: ``EventStoreError/Code/invalidEvent`` for an edit of a last-writer-wins field,
    ///   an edit of the wrong kind, or a value a set or counter cannot hold.
    func eventParts(
        for change: Change, policies: [String: MergePolicy], base: HLCTimestamp? = nil,
        incrementsSince: (String) throws -> Int64 = { _ in 0 }
    ) throws -> (fields: [String: Value], updates: [String: FieldUpdate]) {
        if let (name, _) = change.edits.first(where: { (policies[$0.key] ?? .lastWriterWins) == .lastWriterWins }) {
            throw ItemState.notMerged(name, of: change.collection, policy: .lastWriterWins)
        }
        guard !policies.isEmpty else { return (change.fields, [:]) }
        var stale = false
        if let base, let current = version?.hlc { stale = base < current }
        func seen(_ holders: [(id: EventID, stamp: Stamp)]) -> [EventID] {
            holders.filter { base == nil || $0.stamp.hlc <= base! }.map(\.id).sorted()
        }
        var fields = change.fields
        var updates: [String: FieldUpdate] = [:]
        for (name, policy) in policies where policy != .lastWriterWins {
            let written = fields.removeValue(forKey: name)
            let edit = change.edits[name]
            if written == nil && edit == nil && change.operation == .patch { continue }
            switch policy {
            case .addWinsSet:
                let entries = setEntries(name)
                var shown = Set(entries.map(\.key))
                if change.operation != .patch, let own = self.fields[name]?.eventID {
                    // A put clears the field's own list: what only that list holds is added again.
                    shown.subtract(entries.filter { $0.holders.count == 1 && $0.holders[0].id == own }.map(\.key))
                }
                var update = FieldUpdate()
                var kept = shown
                var removed = Set<[UInt8]>()
                if let edit {
                    guard edit.increment == nil else {
                        throw ItemState.notMerged(name, of: change.collection, policy: policy, edit: "increment")
                    }
                    // Adding an element the set holds changes nothing.
                    update.add = ItemState.elements(of: .array(edit.add)).filter { !shown.contains($0.encodedBytes) }
                    removed = Set(edit.remove.map(\.encodedBytes))
                } else {
                    var target: [Value] = []
                    if let written {
                        guard case .array = written else {
                            throw EventStoreError(
                                .invalidEvent,
                                "field \(name.debugDescription) of \(change.collection) is an add-wins set: write an array"
                            )
                        }
                        target = ItemState.elements(of: written)
                    }
                    kept = Set(target.map(\.encodedBytes))
                    update.add = target.filter { !shown.contains($0.encodedBytes) }
                    removed = shown.subtracting(kept)
                }
                for entry in entries where removed.contains(entry.key) {
                    let ids = seen(entry.holders)
                    if !ids.isEmpty { update.remove.append(FieldUpdate.Removal(element: entry.value, seen: ids)) }
                }
                // Written or edited: recorded even when nothing changes; a put or delete that
                // leaves the field out: only when it empties something.
                if written != nil || edit != nil || !update.remove.isEmpty { updates[name] = update }
            case .counter:
                let counted = (counters[name]?.sum ?? 0) &- (stale ? try incrementsSince(name) : 0)
                if let edit {
                    guard let increment = edit.increment else {
                        throw ItemState.notMerged(name, of: change.collection, policy: policy, edit: "add or remove")
                    }
                    updates[name] = .increment(increment)
                } else if let written {
                    guard case .int(let target) = written else {
                        throw EventStoreError(
                            .invalidEvent,
                            "field \(name.debugDescription) of \(change.collection) is a counter: write an integer")
                    }
                    // A put or delete clears the counter's own value; a patch keeps it.
                    let own = change.operation == .patch ? (self.fields[name]?.value.intValue ?? 0) : 0
                    updates[name] = .increment(target &- own &- counted)
                } else if counted != 0 {
                    updates[name] = .increment(0 &- counted)
                }
            case .lastWriterWins: break
            }
        }
        return (fields, updates)
    }

    private static func notMerged(_ name: String, of collection: String, policy: MergePolicy, edit: String = "edit")
        -> EventStoreError
    {
        EventStoreError(
            .invalidEvent,
            "cannot \(edit) field \(name.debugDescription) of \(collection): it merges as \(policy) (declare its merge "
                + "policy in the collection's schema: CollectionSchema.merge(_:as:))")
    }
}
