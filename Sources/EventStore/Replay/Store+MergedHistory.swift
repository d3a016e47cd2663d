extension Store {
    /// The writes to a set or counter field, oldest stamp first: which additions hold the set,
    /// which removals took what they saw and which concurrent additions outlived them, and
    /// every increment of a counter (all count).
    static func mergedHistory(
        of name: String, policy: MergePolicy, events: [Event], final: ItemState, originals: [UInt64: Event]
    ) -> [FieldHistoryEntry] {
        let set = final.sets[name]
        func text(_ value: Value) -> String { String(decoding: value.jsonBytes(), as: UTF8.self) }
        func list(_ values: [Value]) -> String { values.map(text).joined(separator: ", ") }
        var entries: [FieldHistoryEntry] = []
        for event in events {
            let update: FieldUpdate
            var value: Value?
            if let written = event.updates[name] {
                update = written
            } else if let written = event.fields[name] {
                // A whole value written without updates (an older replica, an import).
                value = written
                guard policy == .addWinsSet else {
                    entries.append(
                        FieldHistoryEntry(
                            field: name, event: event, value: written, won: final.fields[name]?.eventID == event.id,
                            reason: final.fields[name]?.eventID == event.id
                                ? "the counter's own value: increments add to it"
                                : "a value a later write replaced", original: originals[event.seq]))
                    continue
                }
                update = FieldUpdate(add: ItemState.elements(of: written))
            } else {
                continue
            }
            var reasons: [String] = []
            var won = false
            if let increment = update.increment {
                won = true
                reasons.append("\(increment >= 0 ? "+" : "")\(increment): counted (a counter adds up every increment)")
            }
            if !update.add.isEmpty {
                let live = update.add.filter { element in
                    set?.live(element).contains { $0.eventID == event.id } ?? false
                }
                won = !live.isEmpty
                if !live.isEmpty { reasons.append("adds \(list(live)): in the set") }
                let gone = update.add.filter { !live.contains($0) }
                if !gone.isEmpty { reasons.append("adds \(list(gone)): taken away by a removal that saw it") }
            }
            for removal in update.remove {
                let outliving = (set?.live(removal.element) ?? []).filter { !removal.seen.contains($0.eventID) }
                let seen =
                    removal.seen.count == 1 ? "the addition it saw" : "the \(removal.seen.count) additions it saw"
                if outliving.isEmpty {
                    won = true
                    reasons.append("removes \(text(removal.element)) (\(seen))")
                } else {
                    let others = outliving.map { $0.eventID.description }.joined(separator: ", ")
                    reasons.append(
                        "removes \(text(removal.element)) (\(seen)); it stays, added by \(others), which the removal had "
                            + "not seen (add wins)")
                }
            }
            if update.isSetUpdate && update.add.isEmpty && update.remove.isEmpty {
                reasons.append("writes the set as it was: no change")
            }
            entries.append(
                FieldHistoryEntry(
                    field: name, event: event, value: value, won: won, reason: reasons.joined(separator: "; "),
                    original: originals[event.seq], update: update))
        }
        return entries.sorted { $0.event.stamp < $1.event.stamp }
    }
}
