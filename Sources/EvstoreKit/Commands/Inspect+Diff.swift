package import EventStore

extension Inspect {
    /// The result of comparing two replicas.
    package struct DiffResult: Sendable {
        /// One field that differs: its value in A and in B (`nil`: absent).
        package struct FieldDifference: Sendable, Hashable {
            /// The collection.
            package var collection: String
            /// The item id.
            package var id: String
            /// The field name.
            package var field: String
            /// The value in A.
            package var a: Value?
            /// The value in B.
            package var b: Value?
        }

        /// Field-level differences, by collection, item and field.
        package var fields: [FieldDifference] = []
        /// Items that exist in A only.
        package var itemsOnlyInA: [String] = []
        /// Items that exist in B only.
        package var itemsOnlyInB: [String] = []
        /// Events A holds that B lacks, in A's log order.
        package var onlyInA: [Event] = []
        /// Events B holds that A lacks, in B's log order.
        package var onlyInB: [Event] = []
        /// Ids that name one event in A and another in B (same id, other content), in A's log
        /// order: one of the replicas reused ids it had published (a store restored from a backup
        /// or copied before sync detected it, or a forged id accepted by an older server).
        package var conflictingIDs: [(a: Event, b: Event)] = []
        /// Events in A and items in A.
        package var countsA: (events: UInt64, items: Int) = (0, 0)
        /// Events in B and items in B.
        package var countsB: (events: UInt64, items: Int) = (0, 0)

        /// Whether the replicas hold the same items and events.
        package var isEqual: Bool {
            fields.isEmpty && itemsOnlyInA.isEmpty && itemsOnlyInB.isEmpty && onlyInA.isEmpty && onlyInB.isEmpty
                && conflictingIDs.isEmpty
        }
    }

    /// Compares the items (field by field) and the events (by id) of two stores.
    package static func diff(_ a: Store, _ b: Store) throws -> DiffResult {
        var result = DiffResult()
        let collections = Set(try a.read { try $0.collections() }).union(try b.read { try $0.collections() }).sorted()
        for collection in collections {
            let left = try allItems(a, collection)
            let right = try allItems(b, collection)
            result.countsA.items += left.count
            result.countsB.items += right.count
            for id in Set(left.keys).union(right.keys).sorted() {
                if left[id] == nil { result.itemsOnlyInB.append("\(collection)/\(id)") }
                if right[id] == nil { result.itemsOnlyInA.append("\(collection)/\(id)") }
                let l = left[id]?.fields ?? [:]
                let r = right[id]?.fields ?? [:]
                for field in Set(l.keys).union(r.keys).sorted() where l[field] != r[field] {
                    result.fields.append(.init(collection: collection, id: id, field: field, a: l[field], b: r[field]))
                }
            }
        }
        (result.onlyInA, result.conflictingIDs) = try compareEvents(a, against: b)
        result.onlyInB = try compareEvents(b, against: a).missing
        result.countsA.events = try a.head()
        result.countsB.events = try b.head()
        return result
    }

    private static func allItems(_ store: Store, _ collection: String) throws -> [String: Item] {
        var items: [String: Item] = [:]
        try store.read { reader in
            var cursor: String?
            repeat {
                let page = try reader.items(in: collection, after: cursor, limit: 1000)
                for item in page.items { items[item.id] = item }
                cursor = page.next
            } while cursor != nil
        }
        return items
    }

    /// The events of `store` that `other` lacks, and those `other` holds under the same id with
    /// other content.
    static func compareEvents(_ store: Store, against other: Store) throws
        -> (missing: [Event], conflicting: [(a: Event, b: Event)])
    {
        var missing: [Event] = []
        var conflicting: [(a: Event, b: Event)] = []
        try store.read { reader in
            try other.read { otherReader in
                try reader.forEachEvent { event in
                    if let theirs = try otherReader.event(id: event.id) {
                        if !event.hasSameContent(as: theirs) { conflicting.append((event, theirs)) }
                    } else {
                        missing.append(event)
                    }
                    return true
                }
            }
        }
        return (missing, conflicting)
    }

    /// Prints a diff.
    ///
    /// JSON lines: `{"kind": "field", "collection", "id", "field", "a", "b", "in_a", "in_b"}` per
    /// differing field (`in_a`/`in_b`: whether the field exists there), then `{"kind":
    /// "only-in-a"|"only-in-b", "seq", "event", "hlc", "op", "collection", "item"}` per event
    /// (`seq`: its position in the store that has it), then `{"kind": "id-conflict", "event",
    /// "seq_a", "seq_b", "digest_a", "digest_b", "collection", "item"}` per id that names other
    /// events in A and B. Equal replicas print nothing (exit 0).
    package static func printDiff(
        _ result: DiffResult, labels: (a: String, b: String) = ("A", "B"), limit: Int = 50, format: OutputFormat,
        output: Output
    ) {
        switch format {
        case .jsonl:
            for entry in result.fields {
                output.line(
                    Rendering.jsonLine([
                        "kind": "field", "collection": .string(entry.collection), "id": .string(entry.id),
                        "field": .string(entry.field), "a": entry.a ?? .null, "b": entry.b ?? .null,
                        "in_a": .bool(entry.a != nil), "in_b": .bool(entry.b != nil),
                    ]))
            }
            for (kind, events) in [("only-in-a", result.onlyInA), ("only-in-b", result.onlyInB)] {
                for event in events {
                    output.line(
                        Rendering.jsonLine([
                            "kind": .string(kind), "seq": .int(Int64(event.seq)), "event": Rendering.json(event.id),
                            "hlc": Rendering.json(event.hlc), "op": .string("\(event.operation)"),
                            "collection": .string(event.collection), "item": .string(event.item),
                        ]))
                }
            }
            for (a, b) in result.conflictingIDs {
                output.line(
                    Rendering.jsonLine([
                        "kind": "id-conflict", "event": Rendering.json(a.id), "seq_a": .int(Int64(a.seq)),
                        "seq_b": .int(Int64(b.seq)), "digest_a": .string(a.digest.description),
                        "digest_b": .string(b.digest.description), "collection": .string(a.collection),
                        "item": .string(a.item),
                    ]))
            }
        case .table:
            output.line("A  \(labels.a)  (\(result.countsA.events) events, \(result.countsA.items) items)")
            output.line("B  \(labels.b)  (\(result.countsB.events) events, \(result.countsB.items) items)")
            output.line()
            if result.isEqual {
                output.line("✔ equal: the replicas hold the same items and the same events")
                return
            }
            for (side, items) in [("A", result.itemsOnlyInA), ("B", result.itemsOnlyInB)] where !items.isEmpty {
                let list = items.prefix(limit).joined(separator: ", ") + (items.count > limit ? ", …" : "")
                output.line("\(items.count) item\(items.count == 1 ? "" : "s") only in \(side): \(list)")
            }
            if !result.fields.isEmpty {
                let items = Set(result.fields.map { "\($0.collection)/\($0.id)" }).count
                output.line(
                    "\(result.fields.count) field\(result.fields.count == 1 ? " differs" : "s differ") in \(items) item\(items == 1 ? "" : "s"):"
                )
                var table = Table(columns: ["item", "field", "A", "B"])
                table.maxCellWidth = 40
                for entry in result.fields.prefix(limit) {
                    table.add([
                        "\(entry.collection)/\(entry.id)", entry.field, Rendering.text(entry.a),
                        Rendering.text(entry.b),
                    ])
                }
                table.render().forEach { output.line("  " + $0) }
                if result.fields.count > limit { output.line("  … and \(result.fields.count - limit) more (--limit)") }
                output.line()
            }
            for (side, events) in [("A", result.onlyInA), ("B", result.onlyInB)] where !events.isEmpty {
                let other = side == "A" ? "B" : "A"
                output.line(
                    "\(events.count) event\(events.count == 1 ? "" : "s") only in \(side) (\(other) lacks them):")
                var table = Table(columns: ["seq", "event", "stamp (HLC)", "op", "item", "fields"])
                table.rightAligned = [0]
                table.maxCellWidth = 40
                for event in events.prefix(limit) {
                    table.add([
                        "\(event.seq)", Rendering.shortID(event.id), Rendering.stamp(event.hlc), "\(event.operation)",
                        "\(event.collection)/\(event.item)", Rendering.changes(of: event),
                    ])
                }
                table.render().forEach { output.line("  " + $0) }
                if events.count > limit { output.line("  … and \(events.count - limit) more (--limit)") }
                output.line()
            }
            if !result.conflictingIDs.isEmpty {
                let count = result.conflictingIDs.count
                output.line(
                    "\(count) event id\(count == 1 ? " names" : "s name") different events in A and B (one replica reused "
                        + "ids it had published: restored from a backup or copied):")
                var table = Table(columns: ["event", "A (seq, digest)", "B (seq, digest)", "item"])
                for (a, b) in result.conflictingIDs.prefix(limit) {
                    table.add([
                        Rendering.shortID(a.id), "\(a.seq) \(a.digest)", "\(b.seq) \(b.digest)",
                        "\(a.collection)/\(a.item)",
                    ])
                }
                table.render().forEach { output.line("  " + $0) }
                if count > limit { output.line("  … and \(count - limit) more (--limit)") }
                output.line()
                output.line("✘ the replicas differ, and sync cannot make them equal while an id names two events")
                return
            }
            output.line("✘ the replicas differ; syncing both with the same server makes them equal")
        }
    }
}
