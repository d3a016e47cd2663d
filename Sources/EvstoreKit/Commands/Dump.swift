package import EventStore
import Foundation

/// `evstore dump`: the log, the items, the search terms, the conflicts or the metadata.
package struct Dump: Sendable {
    /// What to dump.
    package enum Section: String, CaseIterable, Sendable {
        /// Events of the log (the default).
        case events
        /// Current items.
        case items
        /// Search index terms with their document counts.
        case terms
        /// Conflict records.
        case conflicts
        /// Store metadata: replica, clock, format, generation, sync cursors.
        case meta
    }

    /// The section.
    package var section: Section = .events
    /// The first seq (events).
    package var from: UInt64 = 1
    /// The last seq (events).
    package var to: UInt64 = .max
    /// Only this collection.
    package var collection: String?
    /// Only this item.
    package var item: String?
    /// Only events from this origin (replica id or its prefix).
    package var origin: String?
    /// The most records.
    package var limit: Int = .max
    /// Table or JSON lines.
    package var format: OutputFormat = .table

    /// Creates a dump with defaults.
    package init() {}

    /// Prints the records.
    ///
    /// - Throws: ``ToolError/usage(_:)`` for a filter the section does not support (an
    ///   `--origin` with `--items`, say), before anything is printed.
    package func run(store: Store, output: Output) throws {
        try checkFilters()
        switch section {
        case .events: try events(store, output)
        case .items: try items(store, output)
        case .terms: try terms(store, output)
        case .conflicts: try conflicts(store, output)
        case .meta: try meta(store, output)
        }
    }

    /// The filters each section honours: a filter given to a section that would ignore it is a
    /// usage error rather than a silently unfiltered dump.
    func checkFilters() throws {
        let given: [(flag: String, sections: [Section], isSet: Bool)] = [
            ("--from/--to", [.events, .conflicts], from != 1 || to != .max),
            ("--collection", [.events, .items, .terms, .conflicts], collection != nil),
            ("--item", [.events, .items, .conflicts], item != nil),
            ("--origin", [.events, .conflicts], origin != nil),
        ]
        if let filter = given.first(where: { $0.isSet && !$0.sections.contains(section) }) {
            throw ToolError.usage(
                "\(filter.flag) does not apply to --\(section.rawValue) (only to "
                    + filter.sections.map { "--\($0.rawValue)" }.joined(separator: ", ") + ")")
        }
    }

    private func events(_ store: Store, _ output: Output) throws {
        var rows = EventRows(self)
        // Resolved before the read: it reads in a snapshot of its own, never inside another.
        let resolved = try item.map { try StoreAccess.resolveItem($0, collection: collection, in: store) }
        try store.read { reader in
            let seqs = try resolved.map { try reader.events(collection: $0.collection, item: $0.id).map(\.seq) }
            if let seqs {
                for seq in seqs where seq >= from && seq <= to {
                    guard let event = try reader.event(at: seq), rows.emit(event, output) else { break }
                }
            } else {
                try reader.forEachEvent(from: from, through: to) { rows.emit($0, output) }
            }
        }
        rows.finish(output)
    }

    /// Prints events as `--events` does: filtered by collection, item and origin, up to the limit,
    /// as JSON lines at once or as a table at the end.
    struct EventRows {
        private let dump: Dump
        private let item: (collection: String, id: String)?
        private var table = Table(columns: ["seq", "event", "hlc", "op", "item", "fields"])
        private var count = 0

        /// Rows for `dump`; `item` filters on an item (the store resolved it already when `nil`).
        init(_ dump: Dump, item: (collection: String, id: String)? = nil) {
            self.dump = dump
            self.item = item
        }

        /// Prints `event` when the filters keep it; returns `false` once the limit is reached.
        mutating func emit(_ event: Event, _ output: Output) -> Bool {
            if let collection = dump.collection, event.collection != collection { return true }
            if let item, event.collection != item.collection || event.item != item.id { return true }
            if let origin = dump.origin, !event.id.origin.description.hasPrefix(origin.lowercased()) { return true }
            guard count < dump.limit else { return false }
            count += 1
            switch dump.format {
            case .jsonl: output.line(Rendering.jsonLine(event))
            case .table:
                table.add([
                    "\(event.seq)", Rendering.shortID(event.id), Rendering.stamp(event.hlc), "\(event.operation)",
                    "\(event.collection)/\(event.item)", Rendering.changes(of: event),
                ])
            }
            return true
        }

        /// Prints the table, when the format is one.
        func finish(_ output: Output) {
            if dump.format == .table { table.render().forEach(output.line) }
        }
    }

    private func items(_ store: Store, _ output: Output) throws {
        var table = Table(columns: ["collection", "id", "version", "fields"])
        var count = 0
        // Resolved before the read: it reads in a snapshot of its own, never inside another.
        let resolved = try item.map { try StoreAccess.resolveItem($0, collection: collection, in: store) }
        try store.read { reader in
            var collections = try collection.map { [$0] } ?? reader.collections()
            var onlyID: String?
            if let resolved {
                collections = [resolved.collection]
                onlyID = resolved.id
            }
            for name in collections {
                var cursor: String?
                repeat {
                    let page = try reader.items(in: name, after: cursor, limit: 500)
                    for item in page.items where onlyID == nil || item.id == onlyID {
                        guard count < limit else { return }
                        count += 1
                        switch format {
                        case .jsonl: output.line(Rendering.jsonLine(item))
                        case .table:
                            table.add([
                                item.collection, item.id, Rendering.stamp(item.version), Rendering.fields(item.fields),
                            ])
                        }
                    }
                    cursor = page.next
                } while cursor != nil
            }
        }
        if format == .table { table.render().forEach(output.line) }
    }

    private func terms(_ store: Store, _ output: Output) throws {
        var table = Table(columns: ["collection", "term", "items"])
        var count = 0
        try store.read { reader in
            for name in try collection.map({ [$0] }) ?? reader.collections() {
                try reader.forEachTerm(collection: name) { term, documents in
                    guard count < limit else { return false }
                    count += 1
                    switch format {
                    case .jsonl:
                        output.line(
                            Rendering.jsonLine([
                                "collection": .string(name), "term": .string(term), "items": .int(Int64(documents)),
                            ]))
                    case .table: table.add([name, term, "\(documents)"])
                    }
                    return true
                }
            }
        }
        if format == .table { table.render().forEach(output.line) }
    }

    private func conflicts(_ store: Store, _ output: Output) throws {
        var table = Table(columns: ["seq", "item", "field", "winner", "loser"])
        var itemID: String?
        var itemCollection = collection
        if let item { (itemCollection, itemID) = try StoreAccess.resolveItem(item, collection: collection, in: store) }
        let filtered = from != 1 || to != .max || origin != nil
        let origin = origin?.lowercased()
        let records = try store.read {
            try $0.conflicts(collection: itemCollection, item: itemID, limit: filtered ? .max : limit)
        }.filter { record in
            record.seq >= from && record.seq <= to
                && origin.map { origin in
                    [record.winner, record.loser].contains { $0.event.origin.description.hasPrefix(origin) }
                } ?? true
        }.prefix(limit)
        for record in records {
            switch format {
            case .jsonl:
                func write(_ write: FieldWrite) -> Value {
                    [
                        "event": Rendering.json(write.event), "hlc": Rendering.json(write.hlc),
                        "value": write.value ?? .null,
                        "cleared": .bool(write.value == nil),
                    ]
                }
                output.line(
                    Rendering.jsonLine([
                        "seq": .int(Int64(record.seq)), "collection": .string(record.collection),
                        "item": .string(record.item),
                        "field": .string(record.field), "winner": write(record.winner), "loser": write(record.loser),
                    ]))
            case .table:
                table.add([
                    "\(record.seq)", "\(record.collection)/\(record.item)", record.field,
                    "\(Rendering.text(record.winner.value)) by \(Rendering.shortID(record.winner.event)) @ \(Rendering.stamp(record.winner.hlc))",
                    "\(Rendering.text(record.loser.value)) by \(Rendering.shortID(record.loser.event)) @ \(Rendering.stamp(record.loser.hlc))",
                ])
            }
        }
        if format == .table { table.render().forEach(output.line) }
    }
}
