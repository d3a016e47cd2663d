/// Add-wins sets and counters in an item's state (see ``MergePolicy``).
///
/// - A set field's elements come from additions, each identified by the event that made it; a
///   removal takes away the additions its writer had seen. A value written to a set field (a
///   whole list, from an event that carries no ``Event/updates`` for it: an older replica, an
///   import) adds its elements.
/// - A counter's value is its last-writer-wins value, when it has one (an integer written as a
///   plain value), plus every increment.
/// - `put` and `delete` floors do not clear sets and counters: the replica that writes a `put`
///   or `delete` turns it into removals of the elements it holds and a decrement of the counts
///   (``eventParts(for:policies:)``), so additions and increments it had not seen survive it.
///   They show while the item exists; a set or counter written after the item's last delete
///   makes it exist again, as any later write does.
extension ItemState {
    /// Applies the event's updates, and the values it writes to set fields.
    mutating func applyMerged(_ event: Event, sets setFields: Set<String>, collectOutcomes: Bool) -> [Outcome] {
        let stamp = event.stamp
        let addition = SetField.Addition(stamp: stamp, sequence: event.id.sequence)
        var outcomes: [Outcome] = []
        for (name, value) in event.fields where setFields.contains(name) {
            var set = sets[name] ?? SetField(touched: stamp)
            set.touched = max(set.touched, stamp)
            for element in ItemState.elements(of: value) { set.add(element, by: addition) }
            sets[name] = set
        }
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

    /// The distinct elements a plain value adds to a set: an array's elements (in order), or
    /// the value itself.
    static func elements(of value: Value) -> [Value] {
        guard case .array(let elements) = value else { return [value] }
        var seen = Set<Value>()
        return elements.filter { seen.insert($0).inserted }
    }

    /// Whether a set has elements, or a counter a value other than zero, written after `stamp`
    /// (the item's last delete; any, when `nil`).
    func hasMergedContent(after stamp: Stamp?) -> Bool {
        func after(_ touched: Stamp) -> Bool { stamp.map { touched > $0 } ?? true }
        return sets.values.contains { after($0.touched) && !$0.isEmpty }
            || counters.values.contains { after($0.touched) && $0.sum != 0 }
    }

    /// Adds the values of sets and counters to `values` (which holds the other fields).
    func mergedValues(into values: inout [String: Value]) {
        for name in Set(sets.keys).union(counters.keys) {
            values[name] = mergedValue(of: name) ?? values[name]
        }
    }

    /// A set's elements or a counter's value, when the field has one (`nil` for other fields,
    /// an empty set and a counter at zero without a value of its own).
    func mergedValue(of name: String) -> Value? {
        if let set = sets[name] {
            let elements = set.values
            return elements.isEmpty ? nil : .array(elements)
        }
        if let counter = counters[name] {
            let base = fields[name]?.value
            guard counter.sum != 0 else { return base }
            return .int((base?.intValue ?? 0) &+ counter.sum)
        }
        return nil
    }

    /// The fields and updates of the event a local change becomes, against this state: what
    /// the change writes to sets and counters (whole values or ``FieldEdit``s) becomes the
    /// additions, removals and increments that take them from what this replica holds to what
    /// was written; a `put` that leaves a set or counter out, and a `delete`, empty it.
    ///
    /// - Parameter policies: The collection's merge policies (fields not named are
    ///   last-writer-wins).
    /// - Throws: ``EventStoreError/Code/invalidEvent`` for an edit of a last-writer-wins field,
    ///   an edit of the wrong kind, or a value a set or counter cannot hold.
    func eventParts(for change: Change, policies: [String: MergePolicy]) throws
        -> (fields: [String: Value], updates: [String: FieldUpdate])
    {
        if policies.isEmpty {
            if let (name, _) = change.edits.first {
                throw ItemState.notMerged(name, of: change.collection, policy: .lastWriterWins)
            }
            return (change.fields, [:])
        }
        var fields = change.fields
        var updates: [String: FieldUpdate] = [:]
        let clearsBase = change.operation != .patch
        for (name, policy) in policies where policy != .lastWriterWins {
            if let edit = change.edits[name] {
                updates[name] = try update(for: edit, field: name, policy: policy, collection: change.collection)
            } else if let value = fields.removeValue(forKey: name) {
                switch policy {
                case .addWinsSet:
                    guard case .array = value else {
                        throw EventStoreError(
                            .invalidEvent,
                            "field \(name.debugDescription) of \(change.collection) is an add-wins set: write an array")
                    }
                    updates[name] = setUpdate(field: name, to: ItemState.elements(of: value))
                case .counter:
                    guard case .int(let target) = value else {
                        throw EventStoreError(
                            .invalidEvent,
                            "field \(name.debugDescription) of \(change.collection) is a counter: write an integer")
                    }
                    updates[name] = .increment(target &- counterValue(name, clearingBase: clearsBase))
                case .lastWriterWins: break
                }
            } else if change.operation != .patch {
                // A put without the field, or a delete, empties it.
                switch policy {
                case .addWinsSet:
                    let update = setUpdate(field: name, to: [])
                    if !update.remove.isEmpty { updates[name] = update }
                case .counter:
                    let sum = counters[name]?.sum ?? 0
                    if sum != 0 { updates[name] = .increment(0 &- sum) }
                case .lastWriterWins: break
                }
            }
        }
        if let name = change.edits.keys.first(where: { (policies[$0] ?? .lastWriterWins) == .lastWriterWins }) {
            throw ItemState.notMerged(name, of: change.collection, policy: .lastWriterWins)
        }
        return (fields, updates)
    }

    /// The update that takes a set field from its elements to `target`.
    private func setUpdate(field name: String, to target: [Value]) -> FieldUpdate {
        let set = sets[name]
        let wanted = Set(target)
        var update = FieldUpdate()
        update.add = target.filter { set?.live($0).isEmpty ?? true }
        for element in set?.values ?? [] where !wanted.contains(element) {
            update.remove.append(
                FieldUpdate.Removal(element: element, seen: set?.live(element).map(\.eventID).sorted() ?? []))
        }
        return update
    }

    /// A counter's value, without its last-writer-wins value when the event clears it.
    private func counterValue(_ name: String, clearingBase: Bool) -> Int64 {
        let sum = counters[name]?.sum ?? 0
        return clearingBase ? sum : (fields[name]?.value.intValue ?? 0) &+ sum
    }

    /// The update an application's edit becomes.
    private func update(for edit: FieldEdit, field name: String, policy: MergePolicy, collection: String) throws
        -> FieldUpdate
    {
        if let increment = edit.increment {
            guard policy == .counter else {
                throw ItemState.notMerged(name, of: collection, policy: policy, edit: "increment")
            }
            return .increment(increment)
        }
        guard policy == .addWinsSet else {
            throw ItemState.notMerged(name, of: collection, policy: policy, edit: "add or remove")
        }
        let set = sets[name]
        var update = FieldUpdate(add: ItemState.elements(of: .array(edit.add)))
        for element in ItemState.elements(of: .array(edit.remove)) {
            let seen = set?.live(element).map(\.eventID).sorted() ?? []
            if !seen.isEmpty { update.remove.append(FieldUpdate.Removal(element: element, seen: seen)) }
        }
        return update
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
