public import EventStore
public import Foundation

/// `evstore import` and `evstore export`: JSON Lines in and out.
///
/// Import accepts, one per line, either a change stamped now by the importing replica
/// (`{"collection": "notes", "id": "n1", "op": "put", "fields": {…}}`) or an event as `export`
/// writes it (origin and clock stamp kept; an event already in the log is skipped).
public enum Transfer {
    /// What an import did.
    public struct ImportResult: Sendable, Hashable {
        /// Local changes appended.
        public var changes = 0
        /// Events ingested.
        public var events = 0
        /// Events the log already held.
        public var duplicates = 0
    }

    enum Line {
        case change(Change)
        case event(Event)
    }

    /// Parses every line first — a bad line fails the import before anything is written — then
    /// appends in batches of `batchSize` with bulk durability and one flush at the end.
    public static func importLines(_ data: Data, into store: Store, batchSize: Int = 1000) throws -> ImportResult {
        var lines: [Line] = []
        var number = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let bytes = Array(raw)
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                lines.append(try parse(bytes))
            } catch let error as EventStoreError {
                throw ToolError("line \(number): \(error.message)")
            } catch {
                throw ToolError("line \(number): \(error)")
            }
        }
        // Check everything before writing anything.
        var start = 0
        while start < lines.count {
            let end = min(start + batchSize, lines.count)
            var changes: [Change] = []
            var events: [Event] = []
            for line in lines[start..<end] {
                switch line {
                case .change(let change): changes.append(change)
                case .event(let event): events.append(event)
                }
            }
            do {
                try store.validate(changes)
                try store.validate(events)
            } catch let error as EventStoreError {
                throw ToolError("lines \(start + 1)…\(end): \(error.message); nothing was imported")
            }
            start = end
        }
        var result = ImportResult()
        let bar = ProgressBar("import")
        let previous = store.configuration.durability
        try store.setDurability(.bulk)
        defer { try? store.setDurability(previous) }
        var index = 0
        while index < lines.count {
            let end = min(index + batchSize, lines.count)
            let batch = Array(lines[index..<end])
            let outcome = try store.write { writer -> ImportResult in
                var outcome = ImportResult()
                for line in batch {
                    switch line {
                    case .change(let change):
                        try writer.append(change)
                        outcome.changes += 1
                    case .event(let event):
                        switch try writer.ingest(event) {
                        case .appended: outcome.events += 1
                        case .duplicate: outcome.duplicates += 1
                        }
                    }
                }
                return outcome
            }
            result.changes += outcome.changes
            result.events += outcome.events
            result.duplicates += outcome.duplicates
            index = end
            bar.update(UInt64(index), of: UInt64(lines.count))
        }
        bar.finish()
        try store.setDurability(previous)
        try store.sync()
        return result
    }

    static func parse(_ bytes: [UInt8]) throws -> Line {
        let value = try Value(json: bytes)
        guard case .object(let object) = value else { throw ToolError("a line must be a JSON object") }
        if object["hlc"] != nil {
            var event = try Event(jsonValue: value)
            event.seq = 0
            return .event(event)
        }
        guard let collection = object["collection"]?.stringValue else { throw ToolError("\"collection\" is missing") }
        guard let id = object["id"]?.stringValue else { throw ToolError("\"id\" is missing") }
        guard let opName = object["op"]?.stringValue, let operation = EventOperation(name: opName) else {
            throw ToolError("\"op\" must be put, patch or delete")
        }
        var fields: [String: Value] = [:]
        if let raw = object["fields"] {
            guard case .object(let members) = raw else { throw ToolError("\"fields\" must be an object") }
            fields = members
        }
        let change = Change(collection: collection, item: id, operation: operation, fields: fields)
        return .change(change)
    }

    /// Writes every event (in log order, or within `from…to`) as canonical JSON lines.
    @discardableResult
    public static func export(from store: Store, from start: UInt64 = 1, to end: UInt64 = .max, output: Output) throws -> Int {
        let bar = ProgressBar("export")
        let head = try store.head()
        var count = 0
        // Chunks of short read transactions, so a long export does not pin old pages.
        var next = start
        while next <= min(end, head) {
            let last = min(next + 9_999, end)
            try store.read { reader in
                try reader.forEachEvent(from: next, through: last) { event in
                    output.line(Rendering.jsonLine(event))
                    count += 1
                    return true
                }
            }
            next = last + 1
            bar.update(min(next - 1, head), of: head)
        }
        bar.finish()
        return count
    }
}
