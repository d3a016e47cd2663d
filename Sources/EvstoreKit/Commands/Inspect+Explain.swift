package import EventStore

extension Inspect {
    /// Why each field of an item holds its value: every write, oldest stamp first, and its fate.
    package struct Explanation: Sendable {
        /// What became of one write: the engine's verdict (``EventStore/FieldHistoryEntry/Outcome``).
        package typealias Outcome = FieldHistoryEntry.Outcome

        /// One write to a field.
        package struct Write: Sendable, Hashable {
            /// The event that wrote (or cleared) the field.
            package var event: Event
            /// The value written; `nil` when the event cleared the field.
            package var value: Value?
            /// What became of it.
            package var outcome: Outcome
            /// The outcome in plain words.
            package var reason: String
            /// The event as the log holds it, when the collection's schema upcast it.
            package var original: Event? = nil
            /// The event's update of an add-wins set or counter (`nil` for other writes).
            package var update: FieldUpdate? = nil
            /// For an update: whether it holds part of the field's value now (an addition in
            /// the set, a removal that took effect, an increment).
            package var counts = false
        }

        /// One field's history.
        package struct Field: Sendable, Hashable {
            /// The field name.
            package var name: String
            /// The value the item holds now (`nil`: cleared or never set).
            package var current: Value?
            /// Every write, oldest stamp first.
            package var writes: [Write]
        }

        /// The item's collection.
        package var collection: String
        /// The item's id.
        package var id: String
        /// The fields, in name order.
        package var fields: [Field]
    }

    /// Works out the history of each field of an item (or one field) from its events and the
    /// store's conflict records.
    ///
    /// - Throws: ``ToolError`` when the item (or the field) was never written.
    package static func explanation(
        store: Store, collection: String?, item: String, field: String?, names: ReplicaNames = ReplicaNames()
    ) throws -> Explanation {
        var names = names
        if names.local == nil { names.local = store.replicaID }
        let (collection, id) = try StoreAccess.resolveItem(item, collection: collection, in: store)
        let entries = try store.history(collection: collection, item: id, field: field)
        if entries.isEmpty
            || (field != nil && !entries.contains { $0.event.fields[$0.field] != nil || $0.update != nil })
        {
            throw ToolError("no writes to \(field.map { "field \"\($0)\" of " } ?? "")\(collection)/\(id)")
        }
        let (conflicts, seqs, current) = try store.read { reader in
            let conflicts = try reader.conflicts(collection: collection, item: id, limit: 10_000)
            var seqs: [EventID: UInt64] = [:]
            for entry in entries { seqs[entry.event.id] = entry.event.seq }
            for record in conflicts where seqs[record.winner.event] == nil {
                seqs[record.winner.event] = try reader.seq(of: record.winner.event)
            }
            return (conflicts, seqs, try reader.item(collection, id))
        }
        func label(_ id: EventID) -> String { names.event(id) + (seqs[id].map { " (seq \($0))" } ?? "") }

        var fields: [Explanation.Field] = []
        var byField: [String: [FieldHistoryEntry]] = [:]
        var order: [String] = []
        for entry in entries {
            if byField[entry.field] == nil { order.append(entry.field) }
            byField[entry.field, default: []].append(entry)
        }
        for name in order {
            let writes = byField[name]!.sorted { $0.event.stamp < $1.event.stamp }
            var explained: [Explanation.Write] = []
            for entry in writes {
                let event = entry.event
                if let update = entry.update {
                    // The engine explains set and counter updates (Store.history).
                    explained.append(
                        Explanation.Write(
                            event: event, value: nil, outcome: .merged, reason: entry.reason, original: entry.original,
                            update: update, counts: entry.won))
                    continue
                }
                // The engine decides what became of the write; the tool words it.
                let outcome = entry.outcome
                let reason: String
                switch outcome {
                case .won:
                    if entry.value == nil {
                        reason = "this \(event.operation) cleared the field, and no later write set it"
                    } else if writes.count == 1 {
                        reason = "holds the field: the only write to it"
                    } else if writes.contains(where: { $0.event.id != event.id && $0.event.hlc == event.hlc }) {
                        reason =
                            "holds the field: the latest stamp of \(writes.count) writes (an equal clock stamp is ordered by replica id)"
                    } else {
                        reason = "holds the field: the latest stamp of \(writes.count) writes, on every replica"
                    }
                case .conflict(let winner):
                    if let record = conflicts.first(where: { $0.field == name && $0.loser.event == event.id }) {
                        reason =
                            "lost a conflict to \(label(winner)): neither write had seen the other; "
                            + (record.winner.hlc == event.hlc
                                ? "equal clock stamps, and \(names.event(winner))'s replica id orders after"
                                : "\(names.event(winner)) has the later stamp")
                    } else {
                        reason =
                            "lost a conflict to \(label(winner)): it was written without seeing this write, and has the later stamp"
                    }
                case .cleared(let by) where by != event.id:
                    let operation = writes.first { $0.event.id == by }?.event.operation
                    reason = "cleared by the later \(operation.map { "\($0)" } ?? "write") \(label(by))"
                case .overwritten(let by):
                    reason = "overwritten by \(label(by)), written after it"
                case .cleared, .merged:
                    reason = entry.reason
                }
                explained.append(
                    Explanation.Write(
                        event: event, value: entry.value, outcome: outcome, reason: reason, original: entry.original))
            }
            fields.append(Explanation.Field(name: name, current: current?.fields[name], writes: explained))
        }
        return Explanation(collection: collection, id: id, fields: fields)
    }

    /// Prints the history of each field of an item (or one field), like `git blame` for a
    /// field: every write, its origin, stamp and value, which one won and why.
    ///
    /// JSON lines, one per write, oldest stamp first within each field: `{"collection", "item",
    /// "field", "seq", "event", "origin", "hlc", "op", "value", "cleared", "won", "outcome":
    /// "won"|"overwritten"|"conflict"|"cleared"|"merged", "beaten_by", "reason", "schema",
    /// "original", "update"}` (`original`: the event as logged when its collection's schema
    /// upcast it, else null; `update`: an add-wins set's or counter's update, as in the event's
    /// JSON, else null — `won` then says whether it holds part of the value).
    package static func explain(
        store: Store, collection: String?, item: String, field: String?, format: OutputFormat,
        names: ReplicaNames = ReplicaNames(), output: Output
    ) throws {
        var names = names
        if names.local == nil { names.local = store.replicaID }
        let explanation = try explanation(store: store, collection: collection, item: item, field: field, names: names)
        switch format {
        case .jsonl:
            for field in explanation.fields {
                for write in field.writes {
                    output.line(
                        Rendering.jsonLine([
                            "collection": .string(explanation.collection), "item": .string(explanation.id),
                            "field": .string(field.name), "seq": .int(Int64(write.event.seq)),
                            "event": Rendering.json(write.event.id),
                            "origin": .string(write.event.id.origin.description),
                            "hlc": Rendering.json(write.event.hlc), "op": .string("\(write.event.operation)"),
                            "value": write.value ?? .null, "cleared": .bool(write.value == nil && write.update == nil),
                            "won": .bool(write.outcome == .won || write.counts), "outcome": .string(write.outcome.name),
                            "beaten_by": write.outcome.beatenBy.map(Rendering.json) ?? .null,
                            "reason": .string(write.reason),
                            "schema": .int(Int64(write.event.schema)),
                            "original": write.original.map(Rendering.logged) ?? .null,
                            "update": write.update?.jsonValue ?? .null,
                        ]))
                }
            }
        case .table:
            for (index, field) in explanation.fields.enumerated() {
                if index > 0 { output.line() }
                let now = field.current.map { "= \(Table.cut(Rendering.text($0), 70))" } ?? "(cleared)"
                output.line("\(explanation.collection)/\(explanation.id) · \(field.name) \(now)")
                var table = Table(columns: ["", "seq", "stamp (HLC)", "by", "op", "value"])
                table.rightAligned = [1]
                table.maxCellWidth = 48
                for write in field.writes {
                    table.add([
                        write.outcome == .won || write.counts ? "✔" : " ", "\(write.event.seq)",
                        Rendering.stamp(write.event.hlc),
                        names.label(write.event.id.origin), "\(write.event.operation)",
                        write.update.map(Rendering.update) ?? Rendering.text(write.value),
                    ])
                }
                let lines = table.render()
                output.line("  " + lines[0])
                output.line("  " + lines[1])
                let indent = String(repeating: " ", count: 2 + Table.displayWidth(" ") + 2)
                for (write, line) in zip(field.writes, lines.dropFirst(2)) {
                    output.line("  " + line)
                    output.line(indent + "└ " + write.reason)
                    if let original = write.original { output.line(indent + "  " + Rendering.upcastNote(original)) }
                }
            }
        }
    }
}
