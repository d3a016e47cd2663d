import LMDB

/// A consistent, read-only view of a store, valid only inside the closure that received it
/// (``Store/read(_:)``). Items, the search index and the log always agree within one view.
///
/// ```swift
/// let (head, note) = try store.read { reader in
///     (try reader.head(), try reader.item("notes", "n1"))
/// }
/// ```
public class StoreReader {
    let tx: ReadTransaction
    let store: Store
    private var cachedGeneration: ProjectionDatabases?

    init(tx: ReadTransaction, store: Store) {
        self.tx = tx
        self.store = store
    }

    static func activeGeneration(_ tx: ReadTransaction, _ schema: Schema) throws -> Int {
        let generation = try Meta.uint64(tx, schema.meta, Meta.generation) ?? 0
        guard generation < 2 else { throw EventStoreError(.corrupt, "projection generation \(generation)") }
        return Int(generation)
    }

    /// The databases of the active projection generation.
    var projection: ProjectionDatabases {
        get throws {
            if let cachedGeneration { return cachedGeneration }
            let databases = store.schema.generations[try StoreReader.activeGeneration(tx, store.schema)]
            cachedGeneration = databases
            return databases
        }
    }

    // MARK: Log

    /// The seq of the last event in the log (0 for an empty log).
    public func head() throws -> UInt64 {
        try tx.withCursor(on: store.schema.events) { cursor in
            try cursor.last().map { try Keys.seq(from: $0.key) } ?? 0
        }
    }

    /// The event at `seq`, or `nil` when the log has none there.
    public func event(at seq: UInt64) throws -> Event? {
        try Keys.seq(seq).withUnsafeBytes { key in
            try tx.value(forKey: key, in: store.schema.events).map { try Event(decoding: $0, seq: seq) }
        }
    }

    /// The log seq of the event with `id`, or `nil` when the log does not hold it.
    public func seq(of id: EventID) throws -> UInt64? {
        try Keys.eventID(id).withUnsafeBytes { key in
            try tx.value(forKey: key, in: store.schema.eventIDs).map { try Keys.seq(from: $0) }
        }
    }

    /// The event with `id`, or `nil` when the log does not hold it.
    public func event(id: EventID) throws -> Event? {
        try seq(of: id).flatMap { try event(at: $0) }
    }

    /// Calls `body` for each event with `from <= seq <= through`, in log order, until it returns
    /// `false`. Events are decoded one at a time: memory stays flat on any log size.
    public func forEachEvent(from: UInt64 = 1, through: UInt64 = .max, _ body: (Event) throws -> Bool) throws {
        try Keys.seq(max(from, 1)).withUnsafeBytes { start in
            try tx.forEach(in: store.schema.events, from: start) { key, value in
                let seq = try Keys.seq(from: key)
                guard seq <= through else { return false }
                return try body(try Event(decoding: value, seq: seq))
            }
        }
    }

    /// A lazy cursor over the events with `from <= seq <= through`.
    public func events(from: UInt64 = 1, through: UInt64 = .max) -> EventCursor {
        EventCursor(reader: self, next: max(from, 1), through: through)
    }

    /// The events of one item, in log order.
    public func events(collection: String, item: String) throws -> [Event] {
        let seqs = try ItemHistory.seqs(of: Keys.item(collection, item), tx: tx, items: try projection.items)
        return try seqs.map { seq in
            guard let event = try event(at: seq) else {
                throw EventStoreError(.corrupt, "item history names seq \(seq), which the log does not hold")
            }
            return event
        }
    }

    // MARK: Metadata

    /// The metadata value stored under `key` (see ``StoreWriter/setMetadata(_:forKey:)``).
    public func metadata(forKey key: String) throws -> [UInt8]? {
        try tx.value(forKey: Array(key.utf8), in: store.schema.meta)
    }

    /// Every metadata entry whose key starts with `prefix`, in key order.
    public func metadata(withPrefix prefix: String) throws -> [(key: String, value: [UInt8])] {
        var entries: [(key: String, value: [UInt8])] = []
        let start = Array(prefix.utf8)
        try start.withUnsafeBytes { start in
            try tx.forEach(in: store.schema.meta, from: start) { key, value in
                guard key.starts(with: start) else { return false }
                entries.append((String(decoding: key, as: UTF8.self), Array(value)))
                return true
            }
        }
        return entries
    }
}

@available(*, unavailable)
extension StoreReader: Sendable {}

/// A lazy, forward-only cursor over a range of the log, bound to its ``StoreReader``.
///
/// ```swift
/// try store.read { reader in
///     var cursor = reader.events(from: 100)
///     while let event = try cursor.next() { print(event.seq, event.operation) }
/// }
/// ```
public struct EventCursor {
    let reader: StoreReader
    var nextSeq: UInt64
    let through: UInt64

    init(reader: StoreReader, next: UInt64, through: UInt64) {
        self.reader = reader
        self.nextSeq = next
        self.through = through
    }

    /// The next event, or `nil` past the end of the range or of the log.
    public mutating func next() throws -> Event? {
        guard nextSeq <= through, let event = try reader.event(at: nextSeq) else { return nil }
        nextSeq += 1
        return event
    }
}

@available(*, unavailable)
extension EventCursor: Sendable {}
