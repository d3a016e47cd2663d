public import EventStore
import Foundation

/// `evstore replay`, `explain`, `diff`, `verify`, `stats`, `search`: logic shared by the
/// executable and the tests.
public enum Inspect {
    /// Prints the items as they were at `point` (all, one collection, or one item); with `step`,
    /// one item's events one by one with what each did to each field.
    public static func replay(
        store: Store, point: ReplayPoint, collection: String?, item: String?, step: Bool, format: OutputFormat,
        output: Output
    ) throws {
        if let item {
            let (collection, id) = try StoreAccess.resolveItem(item, collection: collection, in: store)
            let steps = try store.replaySteps(collection: collection, item: id, to: point)
            if step {
                for entry in steps {
                    switch format {
                    case .jsonl:
                        output.line(Rendering.jsonLine([
                            "seq": .int(Int64(entry.event.seq)), "event": Rendering.json(entry.event.id),
                            "hlc": Rendering.json(entry.event.hlc), "op": .string("\(entry.event.operation)"),
                            "changes": .array(entry.changes.map(changeJSON)),
                        ]))
                    case .table:
                        output.line("seq \(entry.event.seq)  \(entry.event.operation)  by \(Rendering.shortID(entry.event.id))  @ \(entry.event.hlc)")
                        for change in entry.changes { output.line("    " + describe(change)) }
                        if entry.changes.isEmpty { output.line("    (no field changed)") }
                    }
                }
            }
            let state = steps.last?.itemAfter
            switch format {
            case .jsonl:
                if !step {
                    output.line(state.map(Rendering.jsonLine) ?? Rendering.jsonLine(["collection": .string(collection), "id": .string(id), "deleted": true]))
                }
            case .table:
                output.line(step ? "" : "state of \(collection)/\(id) at \(point):")
                if let state {
                    var table = Table(columns: ["field", "value"])
                    for name in state.fields.keys.sorted() { table.add([name, Rendering.text(state.fields[name])]) }
                    table.render().forEach(output.line)
                } else {
                    output.line("(does not exist at \(point))")
                }
            }
            return
        }
        let bar = ProgressBar("replay")
        let state = try store.replay(to: point) { bar.update($0.processed, of: $0.total) }
        bar.finish()
        var table = Table(columns: ["collection", "id", "version", "fields"])
        try state.forEachItem(in: collection) { item in
            switch format {
            case .jsonl: output.line(Rendering.jsonLine(item))
            case .table: table.add([item.collection, item.id, "\(item.version)", Rendering.fields(item.fields)])
            }
            return true
        }
        if format == .table {
            output.line("items at \(point) (\(state.eventsApplied) events applied):")
            table.render().forEach(output.line)
        }
    }

    static func describe(_ change: FieldChange) -> String {
        switch change.outcome {
        case .set: "\(change.field): \(Rendering.text(change.old)) → \(Rendering.text(change.new))"
        case .cleared: "\(change.field): \(Rendering.text(change.old)) → ∅ (cleared)"
        case .lost(let winner): "\(change.field): lost to \(Rendering.shortID(winner)) (stays \(Rendering.text(change.new)))"
        }
    }

    static func changeJSON(_ change: FieldChange) -> Value {
        var members: [String: Value] = ["field": .string(change.field), "old": change.old ?? .null, "new": change.new ?? .null]
        switch change.outcome {
        case .set: members["outcome"] = "set"
        case .cleared: members["outcome"] = "cleared"
        case .lost(let winner):
            members["outcome"] = "lost"
            members["lost_to"] = Rendering.json(winner)
        }
        return .object(members)
    }

    /// Prints the history of each field of an item (or one field): every write, its origin,
    /// stamp and value, which one won and why.
    public static func explain(
        store: Store, collection: String?, item: String, field: String?, format: OutputFormat, output: Output
    ) throws {
        let (collection, id) = try StoreAccess.resolveItem(item, collection: collection, in: store)
        let entries = try store.history(collection: collection, item: id, field: field)
        if entries.isEmpty { throw ToolError("no writes to \(field.map { "field \($0) of " } ?? "")\(collection)/\(id)") }
        switch format {
        case .jsonl:
            for entry in entries {
                output.line(Rendering.jsonLine([
                    "collection": .string(collection), "item": .string(id), "field": .string(entry.field),
                    "seq": .int(Int64(entry.event.seq)), "event": Rendering.json(entry.event.id),
                    "origin": .string(entry.event.id.origin.description), "hlc": Rendering.json(entry.event.hlc),
                    "op": .string("\(entry.event.operation)"), "value": entry.value ?? .null,
                    "cleared": .bool(entry.value == nil), "won": .bool(entry.won), "reason": .string(entry.reason),
                ]))
            }
        case .table:
            var current = ""
            for entry in entries {
                if entry.field != current {
                    if !current.isEmpty { output.line() }
                    current = entry.field
                    output.line("\(collection)/\(id) · \(entry.field)")
                }
                let mark = entry.won ? "✔" : " "
                output.line("  \(mark) \(entry.event.hlc)  \(Rendering.shortID(entry.event.id))  \(entry.event.operation)  \(Rendering.text(entry.value))")
                output.line("      \(entry.reason)")
            }
        }
    }

    /// The result of comparing two replicas.
    public struct DiffResult: Sendable {
        /// Field-level differences: collection, id, field, value in A, value in B.
        public var fields: [(collection: String, id: String, field: String, a: Value?, b: Value?)] = []
        /// Events A holds that B lacks.
        public var onlyInA: [EventID] = []
        /// Events B holds that A lacks.
        public var onlyInB: [EventID] = []
        /// Whether the replicas hold the same items and events.
        public var isEqual: Bool { fields.isEmpty && onlyInA.isEmpty && onlyInB.isEmpty }
    }

    /// Compares the items (field by field) and the events (by id) of two stores.
    public static func diff(_ a: Store, _ b: Store) throws -> DiffResult {
        var result = DiffResult()
        let collections = Set(try a.read { try $0.collections() }).union(try b.read { try $0.collections() }).sorted()
        for collection in collections {
            let left = try allItems(a, collection)
            let right = try allItems(b, collection)
            for id in Set(left.keys).union(right.keys).sorted() {
                let l = left[id]?.fields ?? [:]
                let r = right[id]?.fields ?? [:]
                if left[id] == nil || right[id] == nil {
                    if left[id] == nil && right[id] == nil { continue }
                }
                for field in Set(l.keys).union(r.keys).sorted() where l[field] != r[field] {
                    result.fields.append((collection, id, field, l[field], r[field]))
                }
                if l.isEmpty && r.isEmpty && (left[id] == nil) != (right[id] == nil) {
                    result.fields.append((collection, id, "(exists)", left[id] == nil ? nil : true, right[id] == nil ? nil : true))
                }
            }
        }
        result.onlyInA = try missing(from: b, in: a)
        result.onlyInB = try missing(from: a, in: b)
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

    private static func missing(from other: Store, in store: Store) throws -> [EventID] {
        var ids: [EventID] = []
        try store.read { reader in
            try other.read { otherReader in
                try reader.forEachEvent { event in
                    if try otherReader.seq(of: event.id) == nil { ids.append(event.id) }
                    return true
                }
            }
        }
        return ids
    }

    /// Prints a diff.
    public static func printDiff(_ result: DiffResult, format: OutputFormat, output: Output) {
        switch format {
        case .jsonl:
            for entry in result.fields {
                output.line(Rendering.jsonLine([
                    "kind": "field", "collection": .string(entry.collection), "id": .string(entry.id),
                    "field": .string(entry.field), "a": entry.a ?? .null, "b": entry.b ?? .null,
                ]))
            }
            for id in result.onlyInA { output.line(Rendering.jsonLine(["kind": "only-in-a", "event": Rendering.json(id)])) }
            for id in result.onlyInB { output.line(Rendering.jsonLine(["kind": "only-in-b", "event": Rendering.json(id)])) }
        case .table:
            if result.isEqual {
                output.line("the replicas hold the same items and the same events")
                return
            }
            if !result.fields.isEmpty {
                var table = Table(columns: ["item", "field", "A", "B"])
                for entry in result.fields {
                    table.add(["\(entry.collection)/\(entry.id)", entry.field, Rendering.text(entry.a), Rendering.text(entry.b)])
                }
                table.render().forEach(output.line)
            }
            if !result.onlyInA.isEmpty {
                output.line("events only in A (\(result.onlyInA.count)): " + result.onlyInA.prefix(20).map(Rendering.shortID).joined(separator: ", "))
            }
            if !result.onlyInB.isEmpty {
                output.line("events only in B (\(result.onlyInB.count)): " + result.onlyInB.prefix(20).map(Rendering.shortID).joined(separator: ", "))
            }
        }
    }

    /// Prints a verification report; returns whether the store is consistent.
    @discardableResult
    public static func printVerification(_ report: VerificationReport, format: OutputFormat, output: Output) -> Bool {
        switch format {
        case .jsonl:
            for problem in report.problems {
                output.line(Rendering.jsonLine([
                    "kind": .string(problem.kind), "database": .string(problem.database), "key": .string(problem.key),
                    "detail": .string(problem.detail),
                ]))
            }
            output.line(Rendering.jsonLine([
                "consistent": .bool(report.isConsistent), "events": .int(Int64(report.eventsChecked)),
                "entries": .int(Int64(report.entriesCompared)), "problems": .int(Int64(report.problems.count)),
            ]))
        case .table:
            if !report.problems.isEmpty {
                var table = Table(columns: ["problem", "database", "key", "detail"])
                for problem in report.problems { table.add([problem.kind, problem.database, problem.key, problem.detail]) }
                table.render().forEach(output.line)
            }
            output.line(
                report.isConsistent
                    ? "ok: \(report.eventsChecked) events, \(report.entriesCompared) projection entries equal a rebuild from the log"
                    : "FAILED: \(report.problems.count)\(report.truncated ? "+" : "") problems (\(report.eventsChecked) events checked)")
        }
        return report.isConsistent
    }

    /// Prints store statistics.
    public static func printStatistics(_ stats: StoreStatistics, format: OutputFormat, output: Output) {
        switch format {
        case .jsonl:
            output.line(Rendering.jsonLine([
                "events": .int(Int64(stats.events)), "conflicts": .int(Int64(stats.conflicts)),
                "items": .object(stats.items.mapValues { .int(Int64($0)) }), "map_size": .int(Int64(stats.mapSize)),
                "used_bytes": .int(Int64(stats.usedBytes)), "page_size": .int(Int64(stats.pageSize)),
                "readers": .int(Int64(stats.readersInUse)), "max_readers": .int(Int64(stats.maxReaders)),
                "generation": .int(Int64(stats.generation)),
            ]))
            for db in stats.databases {
                output.line(Rendering.jsonLine([
                    "database": .string(db.name), "entries": .int(Int64(db.entries)), "depth": .int(Int64(db.depth)),
                    "branch_pages": .int(Int64(db.branchPages)), "leaf_pages": .int(Int64(db.leafPages)),
                    "overflow_pages": .int(Int64(db.overflowPages)), "bytes": .int(Int64(db.bytes)),
                ]))
            }
        case .table:
            output.line("events     \(stats.events)")
            output.line("items      " + (stats.items.isEmpty ? "0" : stats.items.keys.sorted().map { "\($0): \(stats.items[$0]!)" }.joined(separator: ", ")))
            output.line("conflicts  \(stats.conflicts)")
            output.line("map        \(bytes(stats.usedBytes)) used of \(bytes(stats.mapSize)) (page \(stats.pageSize) B)")
            output.line("readers    \(stats.readersInUse) of \(stats.maxReaders)")
            output.line("generation g\(stats.generation)")
            output.line()
            var table = Table(columns: ["database", "entries", "depth", "branch", "leaf", "overflow", "size"])
            for db in stats.databases {
                table.add(["\(db.name)", "\(db.entries)", "\(db.depth)", "\(db.branchPages)", "\(db.leafPages)", "\(db.overflowPages)", bytes(db.bytes)])
            }
            table.render().forEach(output.line)
        }
    }

    static func bytes(_ count: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// Prints search results.
    public static func printSearch(_ results: [SearchResult], format: OutputFormat, output: Output) {
        switch format {
        case .jsonl:
            for result in results {
                output.line(Rendering.jsonLine([
                    "score": .double(result.score), "collection": .string(result.item.collection),
                    "id": .string(result.item.id), "fields": .object(result.item.fields),
                ]))
            }
        case .table:
            var table = Table(columns: ["score", "item", "title", "fields"])
            for result in results {
                table.add([
                    String(format: "%.3f", result.score), "\(result.item.collection)/\(result.item.id)",
                    result.item["title"]?.stringValue ?? "", Rendering.fields(result.item.fields.filter { $0.key != "title" }),
                ])
            }
            table.render().forEach(output.line)
            if results.isEmpty { output.line("(no results)") }
        }
    }
}
