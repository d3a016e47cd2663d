package import EventStore
package import Foundation

/// `evstore import` and `evstore export`: JSON Lines in and out.
///
/// Import accepts, one per line, either a change stamped now by the importing replica
/// (`{"collection": "notes", "id": "n1", "op": "put", "fields": {…}}`) or an event as `export`
/// writes it (origin and clock stamp kept; an event already in the log is skipped). A line with
/// an unknown key, or an integer beyond 64 bits, is refused and named.
///
/// ```swift
/// let lines = try Transfer.parse(Data(contentsOf: url))
/// let result = try Transfer.importLines(lines, into: store)
/// ```
package enum Transfer {
    /// What an import did.
    package struct ImportResult: Sendable, Hashable {
        /// Local changes appended.
        package var changes = 0
        /// Events ingested.
        package var events = 0
        /// Events the log already held.
        package var duplicates = 0
    }

    /// One parsed line of an import.
    package struct ImportLine: Sendable {
        /// What a line holds.
        package enum Content: Sendable {
            /// A change, to be stamped by the importing replica.
            case change(Change)
            /// An event from a log, ingested with its identity and stamp.
            case event(Event)
        }

        /// The line's number in the input (from 1).
        package var number: Int
        /// The change or the event.
        package var content: Content
        /// The line's length in bytes: what sizes the import's batches.
        package var bytes = 0
    }

    /// Parses JSON Lines; blank lines are skipped.
    ///
    /// - Throws: ``ToolError`` naming the first line that is not a change or an event, and what
    ///   is wrong with it (`line 3: unknown key "feilds" …`, `line 7: invalid JSON: integer
    ///   99999999999999999999 does not fit in 64 bits at fields.count (byte 52)`).
    package static func parse(_ data: Data) throws -> [ImportLine] {
        var lines: [ImportLine] = []
        var number = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let bytes = Array(raw)
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                lines.append(ImportLine(number: number, content: try parse(bytes), bytes: bytes.count))
            } catch let error as ToolError {
                throw ToolError("line \(number): \(error.message)")
            } catch let error as JSONSyntaxError {
                throw ToolError("line \(number): invalid JSON: \(error)")
            } catch let error as EventStoreError {
                throw ToolError("line \(number): \(error.message)")
            } catch {
                throw ToolError("line \(number): \(error)")
            }
        }
        return lines
    }

    /// `evstore import`: parses `data`, opens (or creates) the store at `path`, and imports.
    ///
    /// Nothing is opened when a line does not parse, and a store created for the import is
    /// removed again when no line could be imported.
    ///
    /// - Returns: What was imported, and the log's head afterwards.
    package static func importJSONLines(_ data: Data, intoStoreAt path: String) throws -> (
        result: ImportResult, head: UInt64
    ) {
        let lines = try parse(data)
        let isNew = !FileManager.default.fileExists(atPath: path + "/data.mdb")
        let store = try StoreAccess.openWritable(path, create: true)
        do {
            let result = try importLines(lines, into: store)
            return (result, try store.head())
        } catch {
            if isNew, (try? store.head()) == 0 {
                store.close()
                for file in ["data.mdb", "lock.mdb"] { try? FileManager.default.removeItem(atPath: path + "/" + file) }
            }
            throw error
        }
    }

    /// Parses, checks and imports JSON Lines. See ``importLines(_:into:batchSize:)-([ImportLine],_,_)``.
    package static func importLines(_ data: Data, into store: Store, batchSize: Int = 1000) throws -> ImportResult {
        try importLines(parse(data), into: store, batchSize: batchSize)
    }

    /// Checks every line — a bad one fails the import before anything is written — then appends
    /// in atomic batches of at most `batchSize` lines (and of at most half the store's
    /// ``EventStore/Store/Configuration/maxBatchBytes``, so that large events import too) with
    /// bulk durability, and flushes once at the end.
    ///
    /// The check is what the writes would refuse: a change or event that is not valid, an event
    /// whose id the log or an earlier line holds with other content, an event its collection's
    /// schema cannot read. So only a storage failure (a full disk) can stop an import part-way.
    ///
    /// - Throws: ``ToolError`` naming the first invalid line (nothing is written then), or the
    ///   storage error that stopped the import (the batches before it stay written).
    package static func importLines(_ lines: [ImportLine], into store: Store, batchSize: Int = 1000) throws
        -> ImportResult
    {
        let batches = self.batches(of: lines, count: batchSize, bytes: store.configuration.maxBatchBytes / 2)
        // The first line of each event id, and its content: a later line under the same id must
        // hold the same event (a duplicate), as the log's events must.
        var firstLine: [EventID: (number: Int, digest: EventDigest)] = [:]
        // The ids the change lines will take, under this store's replica id, in line order (an
        // ingested own event moves the next one past it): an event line under one of them that
        // the log does not hold would meet that change's event.
        let own = store.replicaID
        var nextOwn = try store.originSequence() + 1
        var taken: [ClosedRange<UInt64>] = []
        for range in batches {
            let batch = lines[range]
            do {
                try check(batch, store)
            } catch {
                // Find the line to blame.
                for line in batch {
                    do {
                        try check([line], store)
                    } catch let error as EventStoreError {
                        throw ToolError("line \(line.number): \(error.message); nothing was imported")
                    }
                }
                throw ToolError(
                    "lines \(batch.first!.number)…\(batch.last!.number): \(ToolError.describe(error)); nothing was imported"
                )
            }
            for line in batch {
                guard case .event(let event) = line.content else {
                    if let last = taken.last, last.upperBound + 1 == nextOwn {
                        taken[taken.count - 1] = last.lowerBound...nextOwn
                    } else {
                        taken.append(nextOwn...nextOwn)
                    }
                    nextOwn += 1
                    continue
                }
                let digest = event.digest
                if let first = firstLine[event.id] {
                    guard first.digest == digest else {
                        throw ToolError(
                            "line \(line.number): event \(event.id) is also on line \(first.number), with other "
                                + "content; nothing was imported")
                    }
                } else {
                    firstLine[event.id] = (line.number, digest)
                    if event.id.origin == own, try store.read({ try $0.seq(of: event.id) }) == nil {
                        guard !taken.contains(where: { $0.contains(event.id.sequence) }) else {
                            throw ToolError(
                                "line \(line.number): event \(event.id) is under this store's own replica id, at a sequence "
                                    + "a change line before it takes; nothing was imported")
                        }
                        nextOwn = max(nextOwn, event.id.sequence + 1)
                    }
                }
            }
        }
        var result = ImportResult()
        let bar = ProgressBar("import", unit: "lines")
        let previous = store.configuration.durability
        try store.setDurability(.bulk)
        defer { try? store.setDurability(previous) }
        for range in batches {
            let batch = Array(lines[range])
            let outcome = try store.write { writer -> ImportResult in
                var outcome = ImportResult()
                for line in batch {
                    switch line.content {
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
            bar.update(UInt64(range.upperBound), of: UInt64(lines.count))
        }
        bar.finish()
        try store.setDurability(previous)
        try store.sync()
        return result
    }

    /// The import's batches: runs of at most `count` lines and, unless one line alone is larger,
    /// `bytes` bytes of JSON (about what the lines take in the store, which encodes them
    /// smaller).
    static func batches(of lines: [ImportLine], count: Int, bytes: Int) -> [Range<Int>] {
        var batches: [Range<Int>] = []
        var start = 0
        var size = 0
        for (index, line) in lines.enumerated() {
            if index > start && (index - start >= count || size + line.bytes > bytes) {
                batches.append(start..<index)
                start = index
                size = 0
            }
            size += line.bytes
        }
        if start < lines.count { batches.append(start..<lines.count) }
        return batches
    }

    private static func check(_ lines: ArraySlice<ImportLine>, _ store: Store) throws {
        var changes: [Change] = []
        var events: [Event] = []
        for line in lines {
            switch line.content {
            case .change(let change): changes.append(change)
            case .event(let event): events.append(event)
            }
        }
        try store.validate(changes)
        try store.validate(events)
    }

    /// The members of a change line.
    static let changeKeys = ["collection", "id", "op", "fields"]

    static func parse(_ bytes: [UInt8]) throws -> ImportLine.Content {
        let value = try Value(json: bytes)
        guard case .object(let object) = value else { throw ToolError("a line must be a JSON object") }
        if object["hlc"] != nil {
            var event = try Event(jsonValue: value)
            event.seq = 0
            return .event(event)
        }
        // A misspelt key ("feilds") would otherwise import an item without its fields.
        if let unknown = object.keys.filter({ !changeKeys.contains($0) }).min() {
            throw ToolError(
                "unknown key \(unknown.debugDescription) (a change has \(changeKeys.joined(separator: ", ")); "
                    + "an event, as export writes it, has \"hlc\")")
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
        return .change(Change(collection: collection, item: id, operation: operation, fields: fields))
    }

    /// Writes every event (in log order, or within `from…to`) as canonical JSON lines, reading
    /// in short transactions of 10,000 events so a long export does not hold old pages.
    ///
    /// - Returns: The number of events written.
    @discardableResult
    package static func export(from store: Store, from start: UInt64 = 1, to end: UInt64 = .max, output: Output) throws
        -> Int
    {
        let bar = ProgressBar("export")
        let head = try store.head()
        var count = 0
        var next = max(start, 1)
        while next <= min(end, head) {
            let last = min(next + 9_999, end, head)
            try store.read { reader in
                try reader.forEachEvent(from: next, through: last) { event in
                    output.line(Rendering.jsonLine(event))
                    count += 1
                    return true
                }
            }
            next = last + 1
            bar.update(last, of: min(end, head))
        }
        bar.finish()
        return count
    }
}
