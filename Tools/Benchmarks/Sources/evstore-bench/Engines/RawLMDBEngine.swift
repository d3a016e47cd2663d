import Foundation
import LMDB
import Synchronization

/// The honest ceiling: the `LMDB` module used directly, writing each event (``BenchCodec``)
/// under its big-endian seq with `MDB_APPEND`, and the merged item under its id — the log and
/// the items, with no history, no event-id index and no search index.
struct RawLMDBEngine: BenchEngine {
    let context: BenchContext

    init(context: BenchContext) { self.context = context }

    /// An open raw store: the environment and its two databases.
    final class RawStore: Sendable {
        let environment: Environment
        let events: Database
        let items: Database

        init(path: String, mode: Mode) throws {
            var configuration = Environment.Configuration()
            configuration.durability = mode.isDurable ? .durable : .relaxed
            environment = try Environment.open(path: path, configuration: configuration)
            (events, items) = try environment.write { tx in
                (
                    try tx.openDatabase(named: "events", options: .create),
                    try tx.openDatabase(named: "items", options: .create)
                )
            }
        }

        /// The last seq in the log.
        func head() throws -> UInt64 {
            try environment.read { tx in
                try tx.withCursor(on: events) { cursor in
                    try cursor.last().map { UInt64(bigEndian: $0.key.loadUnaligned(as: UInt64.self)) } ?? 0
                }
            }
        }

        /// Appends one event at `seq` and updates its item, in `tx`.
        func apply(_ event: WorkEvent, seq: UInt64, tx: WriteTransaction, buffer: inout [UInt8]) throws {
            buffer.removeAll(keepingCapacity: true)
            BenchCodec.encodeEvent(event, sequence: seq, stamp: seq, into: &buffer)
            try buffer.withUnsafeBytes { value in
                try withUnsafeBytes(of: seq.bigEndian) { key in
                    _ = try tx.put(value, forKey: key, in: events, options: .append)
                }
            }
            try applyToItem(
                event.itemID, operation: event.operation, fields: ItemFields(event), version: seq, tx: tx,
                buffer: &buffer)
        }

        /// Updates one item: a put replaces it, a patch merges into it, a delete removes it.
        func applyToItem(
            _ id: String, operation: Operation, fields: ItemFields, version: UInt64, tx: WriteTransaction,
            buffer: inout [UInt8]
        ) throws {
            var key = id
            try key.withUTF8 { keyBytes in
                let key = UnsafeRawBufferPointer(keyBytes)
                switch operation {
                case .delete:
                    _ = try tx.delete(key, in: items)
                case .put, .patch:
                    var merged = fields
                    if operation == .patch, let existing = try tx.value(forKey: key, in: items) {
                        merged = try BenchCodec.decodeItem(existing).fields
                        merged.merge(fields)
                    }
                    buffer.removeAll(keepingCapacity: true)
                    BenchCodec.encodeItem(merged, version: version, into: &buffer)
                    try buffer.withUnsafeBytes { value in _ = try tx.put(value, forKey: key, in: items) }
                }
            }
        }
    }

    func append(mode: Mode) throws -> ChildResult {
        let path = context.store(.lmdb, mode)
        context.removeStore(path)
        let store = try RawStore(path: path, mode: mode)
        var generator = context.workload.makeGenerator()
        var watch = Stopwatch()
        var seq: UInt64 = 0
        var buffer: [UInt8] = []
        while true {
            let batch = generator.next(1_000)
            if batch.isEmpty { break }
            let first = seq + 1
            try watch.measure {
                try store.environment.write { tx in
                    for (offset, event) in batch.enumerated() {
                        try store.apply(event, seq: first + UInt64(offset), tx: tx, buffer: &buffer)
                    }
                }
            }
            seq += UInt64(batch.count)
        }
        var result = ChildResult()
        result.figures["append.\(mode.rawValue)"] = watch.rate(generator.produced)
        result.notes["checksum"] = generator.checksum.hex
        return result
    }

    func single(mode: Mode, count: Int) throws -> ChildResult {
        let path = context.store(.lmdb, mode, scenario: "single")
        context.removeStore(path)
        let store = try RawStore(path: path, mode: mode)
        var generator = context.workload.makeGenerator()
        let events = generator.next(count)
        var buffer: [UInt8] = []
        var watch = Stopwatch()
        try watch.measure {
            let group = context.options.singleGroup
            var start = 0
            while start < events.count {
                try store.environment.write { tx in
                    for offset in start..<min(start + group, events.count) {
                        try store.apply(events[offset], seq: UInt64(offset + 1), tx: tx, buffer: &buffer)
                    }
                }
                start += group
            }
        }
        return ChildResult(figures: ["single.\(mode.rawValue)": watch.rate(events.count)])
    }

    func concurrent(writers: Int, perWriter: Int) throws -> ChildResult {
        let path = context.store(.lmdb, .durable, scenario: "concurrent")
        context.removeStore(path)
        let store = try RawStore(path: path, mode: .durable)
        let shares = context.writerShares(writers: writers, perWriter: perWriter)
        // Write transactions are serialized by LMDB, so a counter taken inside one gives
        // increasing seqs in commit order.
        let nextSeq = Atomic<UInt64>(1)
        let elapsed = try runConcurrently(writers: writers) { writer in
            var buffer: [UInt8] = []
            for (_, event) in shares[writer] {
                try store.environment.write { tx in
                    let seq = nextSeq.load(ordering: .relaxed)
                    try store.apply(event, seq: seq, tx: tx, buffer: &buffer)
                    nextSeq.store(seq + 1, ordering: .relaxed)
                }
            }
        }
        let total = shares.reduce(0) { $0 + $1.count }
        guard try store.head() == UInt64(total) else { throw BenchError("raw LMDB lost events") }
        return ChildResult(figures: ["concurrent": Double(total) / (Double(elapsed) / 1e9)])
    }

    func reads(ids: [String]) throws -> ChildResult {
        let path = context.store(.lmdb)
        try context.requireStore(path)
        let store = try RawStore(path: path, mode: .durable)
        func item(_ id: String, _ tx: ReadTransaction) throws -> ItemFields? {
            var key = id
            return try key.withUTF8 { key in
                try tx.value(forKey: UnsafeRawBufferPointer(key), in: store.items).map {
                    try BenchCodec.decodeItem($0).fields
                }
            }
        }
        var found = 0
        var watch = Stopwatch()
        try watch.measure {
            for id in ids where try store.environment.read({ tx in try item(id, tx) }) != nil { found += 1 }
        }
        var batchWatch = Stopwatch()
        try batchWatch.measure {
            try store.environment.read { tx in
                for id in ids where try item(id, tx) != nil { found += 1 }
            }
        }
        var scanned = 0
        var fieldCount = 0
        var scanWatch = Stopwatch()
        try scanWatch.measure {
            try store.environment.read { tx in
                try tx.forEach(in: store.events) { _, value in
                    let event = try BenchCodec.decodeEvent(value)
                    scanned += 1
                    fieldCount += event.fields.title == nil ? 0 : 1
                    return true
                }
            }
        }
        return .reads(
            point: watch, batch: batchWatch, ids: ids.count, scan: scanWatch, scanned: scanned, found: found)
    }

    /// Rebuilds the items from the log like EventStore does: chunks of 20,000 events per
    /// transaction, without flushing until the end.
    func rebuild() throws -> ChildResult {
        let path = context.store(.lmdb)
        try context.requireStore(path)
        let store = try RawStore(path: path, mode: .durable)
        let head = try store.head()
        var watch = Stopwatch()
        try watch.measure {
            try store.environment.setDurability(.bulk)
            try store.environment.write { tx in try tx.removeAll(in: store.items) }
            var next: UInt64 = 1
            var buffer: [UInt8] = []
            while next <= head {
                let start = next
                next = try store.environment.write { tx -> UInt64 in
                    var seq = start
                    try withUnsafeBytes(of: start.bigEndian) { startKey in
                        try tx.forEach(in: store.events, from: startKey) { _, value in
                            guard seq < start + 20_000 else { return false }
                            let event = try BenchCodec.decodeEvent(value)
                            try store.applyToItem(
                                event.item, operation: event.operation, fields: event.fields, version: event.stamp,
                                tx: tx,
                                buffer: &buffer)
                            seq += 1
                            return true
                        }
                    }
                    return seq
                }
            }
            try store.environment.setDurability(.durable)
            try store.environment.sync()
        }
        return ChildResult(figures: ["rebuild": watch.rate(Int(head))])
    }

    func size() throws -> ChildResult {
        let path = context.store(.lmdb)
        try context.requireStore(path)
        var result = ChildResult()
        result.figures["size"] = Double(fileSize(path + "/data.mdb")) / 1_048_576
        if let compacted = try compactedSize(path) { result.figures["size.compacted"] = compacted }
        return result
    }
}
