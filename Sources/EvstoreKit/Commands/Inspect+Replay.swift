package import EventStore

extension Inspect {
    /// What `evstore replay` shows.
    package struct ReplayRequest: Sendable {
        /// The point to replay to.
        package var point: ReplayPoint
        /// Only this collection.
        package var collection: String?
        /// Only this item (`ID` with ``collection``, or `COLLECTION/ID`).
        package var item: String?
        /// Print each event and what it did to each field.
        package var step = false
        /// The most events (with ``step``) or items to print.
        package var limit = Int.max
        /// Table or JSON lines.
        package var format: OutputFormat = .table
        /// Names for replicas in tables.
        package var names = ReplicaNames()

        /// Creates a request.
        package init(point: ReplayPoint) { self.point = point }
    }

    /// Prints the items as they were at a point of the log (all, one collection, or one item);
    /// with `step`, each event up to that point and what it did to each field
    /// (`title: "a" → "b"`, or `title: lost to phone/3`).
    ///
    /// JSON lines: items as `dump --items` prints them (`collection`, `id`, `version`, `fields`;
    /// an item that does not exist at that point is `{"collection", "id", "deleted": true}`);
    /// steps as `{"seq", "event", "hlc", "op", "collection", "item", "changes": [{"field",
    /// "old", "new", "outcome": "set"|"cleared"|"lost", "lost_to"}], "item_after"}`.
    package static func replay(store: Store, _ request: ReplayRequest, output: Output) throws {
        var request = request
        if request.point == .seq(.max) { request.point = .seq(try store.head()) }
        var names = request.names
        if names.local == nil { names.local = store.replicaID }
        var target: (collection: String, id: String)?
        if let item = request.item {
            target = try StoreAccess.resolveItem(item, collection: request.collection, in: store)
        }
        if request.step {
            try printSteps(store: store, request, target: target, names: names, output: output)
        }
        if let target {
            let steps = try store.replaySteps(collection: target.collection, item: target.id, to: request.point)
            printItemState(steps.last?.itemAfter, target: target, request, output: output)
            return
        }
        if request.step { return }
        let bar = ProgressBar("replay")
        let state = try store.replay(to: request.point) { bar.update($0.processed, of: $0.total) }
        bar.finish()
        var table = Table(columns: ["collection", "id", "version", "fields"])
        var count = 0
        try state.forEachItem(in: request.collection) { item in
            guard count < request.limit else { return false }
            count += 1
            switch request.format {
            case .jsonl: output.line(Rendering.jsonLine(item))
            case .table:
                table.add([item.collection, item.id, Rendering.stamp(item.version), Rendering.fields(item.fields)])
            }
            return true
        }
        if request.format == .table {
            output.line(
                "items at \(Rendering.point(request.point)) (\(state.eventsApplied) events applied, \(count) items):")
            table.render().forEach(output.line)
        }
    }

    private static func printItemState(
        _ state: Item?, target: (collection: String, id: String), _ request: ReplayRequest, output: Output
    ) {
        switch request.format {
        case .jsonl:
            if request.step { return }
            output.line(
                state.map(Rendering.jsonLine)
                    ?? Rendering.jsonLine([
                        "collection": .string(target.collection), "id": .string(target.id), "deleted": true,
                    ]))
        case .table:
            if request.step { output.line() }
            guard let state else {
                output.line("\(target.collection)/\(target.id) does not exist at \(Rendering.point(request.point))")
                return
            }
            output.line(
                "\(target.collection)/\(target.id) at \(Rendering.point(request.point)) (version \(Rendering.stamp(state.version))):"
            )
            var table = Table(columns: ["field", "value"])
            table.maxCellWidth = 100
            for name in state.fields.keys.sorted() { table.add([name, Rendering.text(state.fields[name])]) }
            table.render().forEach(output.line)
        }
    }

    private static func printSteps(
        store: Store, _ request: ReplayRequest, target: (collection: String, id: String)?, names: ReplicaNames,
        output: Output
    ) throws {
        var steps: [ReplayStep] = []
        if let target {
            steps = try store.replaySteps(collection: target.collection, item: target.id, to: request.point)
        } else {
            // Every item touched up to the point, then all their steps in log order.
            var touched: [String: Set<String>] = [:]
            var order: [(String, String)] = []
            try store.read { reader in
                try reader.forEachEvent { event in
                    if case .seq(let last) = request.point, event.seq > last { return false }
                    if let collection = request.collection, event.collection != collection { return true }
                    if touched[event.collection, default: []].insert(event.item).inserted {
                        order.append((event.collection, event.item))
                    }
                    return true
                }
            }
            let bar = ProgressBar("replay")
            for (index, (collection, id)) in order.enumerated() {
                steps += try store.replaySteps(collection: collection, item: id, to: request.point)
                bar.update(UInt64(index + 1), of: UInt64(order.count))
            }
            bar.finish()
            steps.sort { $0.event.seq < $1.event.seq }
        }
        var seqs: [EventID: UInt64] = [:]
        try store.read { reader in
            for step in steps {
                for change in step.changes {
                    if case .lost(let winner) = change.outcome, seqs[winner] == nil {
                        seqs[winner] = try reader.seq(of: winner)
                    }
                }
            }
        }
        for step in steps.prefix(request.limit) {
            let event = step.event
            switch request.format {
            case .jsonl:
                output.line(
                    Rendering.jsonLine([
                        "seq": .int(Int64(event.seq)), "event": Rendering.json(event.id),
                        "hlc": Rendering.json(event.hlc),
                        "op": .string("\(event.operation)"), "collection": .string(event.collection),
                        "item": .string(event.item), "changes": .array(step.changes.map(changeJSON)),
                        "item_after": step.itemAfter.map { .object($0.fields) } ?? .null,
                        "schema": .int(Int64(event.schema)), "original": step.original.map(Rendering.logged) ?? .null,
                    ]))
            case .table:
                let op = Table.pad("\(event.operation)", 6)
                output.line(
                    "seq \(event.seq)  \(op) \(event.collection)/\(event.item)  by \(names.event(event.id))  at \(Rendering.stamp(event.hlc))"
                )
                if let original = step.original { output.line("    " + Rendering.upcastNote(original)) }
                let width = step.changes.map { Table.displayWidth($0.field) }.max() ?? 0
                for change in step.changes {
                    output.line("    \(Table.pad(change.field, width))  " + describe(change, names: names, seqs: seqs))
                }
                if step.changes.isEmpty {
                    output.line(
                        "    (no field changed\(event.operation == .delete ? "; the item was already gone" : ""))")
                }
            }
        }
    }

    static func describe(_ change: FieldChange, names: ReplicaNames, seqs: [EventID: UInt64]) -> String {
        switch change.outcome {
        case .set: return "\(Table.cut(Rendering.text(change.old), 40)) → \(Table.cut(Rendering.text(change.new), 60))"
        case .cleared: return "\(Table.cut(Rendering.text(change.old), 40)) → ∅ (cleared)"
        case .lost(let winner):
            let seq = seqs[winner].map { " (seq \($0))" } ?? ""
            return
                "lost to \(names.event(winner))\(seq), which has a later stamp; stays \(Table.cut(Rendering.text(change.new), 50))"
        }
    }

    static func changeJSON(_ change: FieldChange) -> Value {
        var members: [String: Value] = [
            "field": .string(change.field), "old": change.old ?? .null, "new": change.new ?? .null, "lost_to": .null,
        ]
        switch change.outcome {
        case .set: members["outcome"] = "set"
        case .cleared: members["outcome"] = "cleared"
        case .lost(let winner):
            members["outcome"] = "lost"
            members["lost_to"] = Rendering.json(winner)
        }
        return .object(members)
    }
}
