/// One committed change to an item, from ``Store/changes(after:)``.
public struct ItemChange: Sendable, Hashable {
    /// The log seq of the event.
    public var seq: UInt64
    /// The collection of the item.
    public var collection: String
    /// The item's id.
    public var id: String
    /// What the event did.
    public var operation: EventOperation
    /// The item's state when the change was delivered (`nil` when it does not exist). During
    /// catch-up this may already include later changes to the same item.
    public var item: Item?
}

/// The committed changes of a store, in log order: first those already in the log after a
/// starting seq (catch-up), then new ones as they commit (live).
///
/// ```swift
/// for try await change in store.changes(after: lastSeen) {
///     print(change.seq, change.collection, change.id, change.item == nil ? "deleted" : "updated")
/// }
/// ```
///
/// Buffering is bounded: each iterator reads the log in chunks of ``chunkSize`` events and keeps
/// only the newest "head moved" signal, so a slow consumer costs no memory — it simply reads
/// further behind in the durable log, and misses nothing. The sequence ends when the store closes.
public struct ItemChanges: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = ItemChange

    /// How many events an iterator reads from the log at a time.
    public static let chunkSize = 256

    let store: Store
    let after: UInt64?
    /// Only changes to this collection (`nil`: all).
    var collection: String? = nil
    /// Only changes to these item ids (`nil`: all).
    var ids: Set<String>? = nil

    /// Creates the iterator; it subscribes to commits at once, so nothing between creation and
    /// the first `next()` is missed.
    public func makeAsyncIterator() -> Iterator {
        let signal = store.commits.subscribe()
        let start = after ?? ((try? store.head()) ?? 0)
        var iterator = Iterator(store: store, next: start + 1, signals: signal.makeAsyncIterator())
        iterator.collection = collection
        iterator.ids = ids
        return iterator
    }

    /// Reads the log after its position, then waits for commits.
    public struct Iterator: AsyncIteratorProtocol {
        let store: Store
        var nextSeq: UInt64
        var signals: AsyncStream<UInt64>.AsyncIterator
        var buffer: [ItemChange] = []
        var index = 0
        var collection: String?
        var ids: Set<String>?

        init(store: Store, next: UInt64, signals: AsyncStream<UInt64>.AsyncIterator) {
            self.store = store
            self.nextSeq = next
            self.signals = signals
        }

        /// The next change, waiting for one to commit; `nil` once the store is closed.
        public mutating func next() async throws -> ItemChange? {
            while true {
                if index < buffer.count {
                    defer { index += 1 }
                    return buffer[index]
                }
                if store.isClosed { return nil }
                let (changes, scanned) = try readChunk()
                buffer = changes
                index = 0
                if let scanned {
                    nextSeq = scanned + 1
                    continue
                }
                guard await signals.next(isolation: #isolation) != nil else { return nil }
            }
        }

        /// The next changes that pass the filters, reading at most ``chunkSize`` events, and the
        /// seq of the last event read (`nil`: none, the log ends before ``nextSeq``).
        private func readChunk() throws -> (changes: [ItemChange], scanned: UInt64?) {
            let start = nextSeq
            return try store.read { reader in
                var changes: [ItemChange] = []
                var scanned: UInt64?
                var read = 0
                let schemas = store.configuration.schemaRegistry
                try reader.forEachEvent(from: start) { logged in
                    read += 1
                    scanned = logged.seq
                    // The change as the items took it: upcast (an item may have moved to another
                    // collection); an event held back for a newer schema changed no item; one the
                    // schema cannot read is delivered as logged.
                    let interpreted: Event?
                    do {
                        interpreted = try schemas.interpret(logged)
                    } catch {
                        interpreted = logged
                    }
                    guard let event = interpreted else { return read < ItemChanges.chunkSize }
                    if collection.map({ $0 == event.collection }) ?? true, ids.map({ $0.contains(event.item) }) ?? true
                    {
                        changes.append(
                            ItemChange(
                                seq: event.seq, collection: event.collection, id: event.item,
                                operation: event.operation, item: try reader.item(event.collection, event.item)))
                    }
                    return read < ItemChanges.chunkSize
                }
                return (changes, scanned)
            }
        }
    }
}

extension Store {
    /// The committed item changes after `seq` (catch-up from the log), then live ones.
    ///
    /// - Parameter seq: The last seq already seen; `nil` to start from the current head (live only).
    public func changes(after seq: UInt64? = nil) -> ItemChanges {
        ItemChanges(store: self, after: seq)
    }

    /// The committed changes to one collection, or to some of its items, after `seq` (catch-up
    /// from the log), then live ones.
    ///
    /// ```swift
    /// for try await change in store.changes(after: lastSeen, in: "tasks", ids: ["t1", "t2"]) {
    ///     print(change.seq, change.id)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - seq: The last seq already seen; `nil` to start from the current head (live only).
    ///   - collection: The collection whose changes to deliver.
    ///   - ids: Only changes to these item ids of the collection (`nil`: every item).
    public func changes(after seq: UInt64? = nil, in collection: String, ids: Set<String>? = nil) -> ItemChanges {
        var changes = ItemChanges(store: self, after: seq)
        changes.collection = collection
        changes.ids = ids
        return changes
    }
}
