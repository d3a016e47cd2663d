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
            guard let update = event.updates[name] else {
                // A whole value written with no update: the field's own value (last writer
                // wins), from a replica that merges the field otherwise or from before.
                guard event.fields[name] != nil || event.operation != .patch else { continue }
                let holds = final.fields[name]?.eventID == event.id
                let value = event.fields[name]
                let what =
                    policy == .counter
                    ? "the counter's own value: increments add to it"
                    : "the set's own list: additions add to it, removals take from it"
                entries.append(
                    FieldHistoryEntry(
                        field: name, event: event, value: value, won: holds && value != nil,
                        reason: value == nil
                            ? "cleared the field's own value (a \(event.operation))"
                            : holds ? what : "a value a later write replaced", original: originals[event.seq]))
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
                    set?.live(element.encodedBytes).contains { $0.eventID == event.id } ?? false
                }
                won = !live.isEmpty
                if !live.isEmpty { reasons.append("adds \(list(live)): in the set") }
                let gone = update.add.filter { !live.contains($0) }
                if !gone.isEmpty { reasons.append("adds \(list(gone)): taken away by a removal that saw it") }
            }
            for removal in update.remove {
                let outliving = (set?.live(removal.element.encodedBytes) ?? []).filter {
                    !removal.seen.contains($0.eventID)
                }
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
                    field: name, event: event, value: nil, won: won, reason: reasons.joined(separator: "; "),
                    original: originals[event.seq], update: update))
        }
        return entries.sorted { $0.event.stamp < $1.event.stamp }
    }
}
