import Foundation
import Synchronization

extension Store {
    /// Runs `body` on the writer thread in a write transaction, and returns its result once the
    /// transaction is committed (durably, under the default durability).
    ///
    /// Concurrent calls share commits (group commit); each call is atomic on its own: if `body`
    /// throws, its writes are rolled back and the other calls of the group still commit.
    /// `body` may run more than once (after the storage map grew), so it must not have effects
    /// outside the transaction.
    ///
    /// - Parameter body: The work; it must not block or wait on other tasks.
    /// - Returns: What `body` returns.
    public func write<T: Sendable>(_ body: @escaping @Sendable (StoreWriter) throws -> T) async throws -> T {
        try await write(eventCount: 1, body)
    }

    /// The blocking variant of ``write(_:)-(@Sendable(StoreWriter)throws->T)``: waits on the
    /// calling thread. Do not call it from the writer thread (from inside another write).
    @_disfavoredOverload
    public func write<T: Sendable>(_ body: @escaping @Sendable (StoreWriter) throws -> T) throws -> T {
        try writeBlocking(eventCount: 1, body)
    }

    func write<T: Sendable>(eventCount: Int, _ body: @escaping @Sendable (StoreWriter) throws -> T) async throws -> T {
        guard let writer else { throw EventStoreError(.readOnly, "the store is open read-only") }
        return try await withCheckedThrowingContinuation { continuation in
            writer.submit(Store.request(eventCount: eventCount, body) { continuation.resume(with: $0) })
        }
    }

    /// A request that runs `body` in a write transaction and hands `complete` what it returned
    /// once the transaction committed (or the error that failed it).
    private static func request<T: Sendable>(
        eventCount: Int, _ body: @escaping @Sendable (StoreWriter) throws -> T,
        complete: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> Writer.Request {
        let result = Mutex<T?>(nil)
        return Writer.Request(
            eventCount: eventCount,
            body: { storeWriter in
                let value = try body(storeWriter)
                result.withLock { $0 = value }
            },
            complete: { outcome in complete(outcome.map { result.withLock { $0! } }) })
    }

    /// Runs `body` on the writer thread alone (no write transaction is open, later writes wait),
    /// for work that manages its own transactions: rebuilds, restamps.
    func exclusive<T: Sendable>(_ body: @escaping @Sendable (Store) throws -> T) async throws -> T {
        guard let writer else { throw EventStoreError(.readOnly, "the store is open read-only") }
        let result = Mutex<T?>(nil)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            writer.submit(
                Writer.Request(
                    eventCount: 0, body: { _ in }, complete: { continuation.resume(with: $0) },
                    exclusive: { store in
                        let value = try body(store)
                        result.withLock { $0 = value }
                    }))
        }
        return result.withLock { $0! }
    }

    func writeBlocking<T: Sendable>(eventCount: Int, _ body: @escaping @Sendable (StoreWriter) throws -> T) throws -> T
    {
        guard let writer else { throw EventStoreError(.readOnly, "the store is open read-only") }
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        writer.submit(
            Store.request(eventCount: eventCount, body) { result in
                outcome.withLock { $0 = result }
                done.signal()
            })
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Appends local changes as one atomic batch and returns their events once durable.
    ///
    /// Every change is checked before anything is written: one invalid change fails the whole
    /// batch and writes nothing.
    ///
    /// ```swift
    /// let events = try await store.append([
    ///     .put("notes", id: "n1", fields: ["title": "Groceries"]),
    ///     .patch("notes", id: "n1", fields: ["done": true]),
    /// ])
    /// ```
    ///
    /// - Returns: The appended events, in order, with their seqs and stamps.
    /// - Throws: ``EventStoreError`` (invalid change, event or batch too large, store closed).
    @discardableResult
    public func append(_ changes: [Change]) async throws -> [Event] {
        try validate(changes)
        return try await write(eventCount: changes.count) { writer in try writer.append(checked: changes) }
    }

    /// The blocking variant of ``append(_:)-([Change])``.
    @_disfavoredOverload
    @discardableResult
    public func append(_ changes: [Change]) throws -> [Event] {
        try validate(changes)
        return try writeBlocking(eventCount: changes.count) { writer in try writer.append(checked: changes) }
    }

    /// Checks changes as ``append(_:)-([Change])`` would, without writing anything.
    ///
    /// - Throws: ``EventStoreError`` for the first invalid change, or a batch over the limits.
    public func validate(_ changes: [Change]) throws {
        var bytes = 0
        for change in changes {
            try Validation.change(change)
            if !change.edits.isEmpty {
                let policies = configuration.schemaRegistry.policies(of: change.collection)
                for (name, edit) in change.edits {
                    let wanted: MergePolicy = edit.increment == nil ? .addWinsSet : .counter
                    guard policies[name] == wanted else {
                        throw EventStoreError(
                            .invalidEvent,
                            "cannot \(edit.increment == nil ? "add or remove" : "increment") field \(name.debugDescription) "
                                + "of \(change.collection): it merges as \(policies[name] ?? .lastWriterWins) (declare its "
                                + "merge policy in the collection's schema: CollectionSchema.merge(_:as:))")
                    }
                }
            }
            let estimate =
                48 + change.collection.utf8.count + change.item.utf8.count
                + change.fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.estimatedBytes }
                + change.edits.reduce(0) { total, edit in
                    // A removal names the additions it saw: 24 bytes each, one per element at least.
                    total + edit.key.utf8.count + 16
                        + (edit.value.add + edit.value.remove).reduce(0) { $0 + $1.estimatedBytes + 24 }
                }
            if estimate > configuration.maxEventBytes / 2 {
                try Validation.size(of: change, limit: configuration.maxEventBytes)
            }
            bytes += estimate
        }
        try Validation.batch(count: changes.count, bytes: bytes, configuration: configuration)
    }

    /// Replaces an item with `fields`.
    @discardableResult
    public func put(_ collection: String, id: String, fields: [String: Value]) async throws -> Event {
        try await append([.put(collection, id: id, fields: fields)])[0]
    }

    /// Sets `fields` on an item, keeping its other fields.
    @discardableResult
    public func patch(_ collection: String, id: String, fields: [String: Value]) async throws -> Event {
        try await append([.patch(collection, id: id, fields: fields)])[0]
    }

    /// Deletes an item.
    @discardableResult
    public func delete(_ collection: String, id: String) async throws -> Event {
        try await append([.delete(collection, id: id)])[0]
    }

    /// What ``ingest(_:)-([Event])`` did with a batch of received events.
    public struct IngestResult: Sendable, Hashable {
        /// The events appended, with their seqs in this log.
        public var appended: [Event]
        /// The ids of events the log already held.
        public var duplicates: [EventID]
    }

    /// Appends events received from other replicas as one atomic batch; events already in the
    /// log are skipped (idempotent).
    ///
    /// Every event is checked (names, fields and size before the transaction, clock skew in
    /// it): one invalid event fails the batch and writes nothing. Each event is encoded once,
    /// when it is checked; the log stores that encoding.
    public func ingest(_ events: [Event]) async throws -> IngestResult {
        let checked = try checkBatch(events)
        return try await write(eventCount: events.count) { writer in try writer.ingestAll(checked: checked) }
    }

    /// The blocking variant of ``ingest(_:)-([Event])``.
    @_disfavoredOverload
    public func ingest(_ events: [Event]) throws -> IngestResult {
        let checked = try checkBatch(events)
        return try writeBlocking(eventCount: events.count) { writer in try writer.ingestAll(checked: checked) }
    }

    /// Checks received events as ``ingest(_:)-([Event])`` would, against the log as it is now,
    /// without writing anything: names, fields and sizes; an id the log or the batch already
    /// holds with other content (``EventStoreError/Code/eventConflict``; with the same content it
    /// is a duplicate, which ingest skips); for a new event, its clock skew and its reading by the
    /// declared schemas (upcasters).
    ///
    /// ```swift
    /// try store.validate(received)      // throws for the first event ingest would refuse
    /// let result = try await store.ingest(received)
    /// ```
    public func validate(_ events: [Event]) throws {
        let checked = try checkBatch(events)
        let clock = self.clock.withLock { $0 }
        let schemas = configuration.schemaRegistry
        var first: [EventID: Int] = [:]
        try read { reader in
            for (index, event) in checked.enumerated() {
                let id = event.event.id
                if let earlier = first[id] {
                    try event.checkSameContent(as: checked[earlier].encoded)
                    continue
                }
                first[id] = index
                if let held = try reader.event(id: id) {
                    try event.checkSameContent(as: held.encoded())
                    continue
                }
                try clock.validate(event.event.hlc)
                _ = try schemas.interpret(event.event)
            }
        }
    }

    /// Checks received events for ingestion (names, fields, sizes; the clock skew is checked in
    /// the transaction), encoding each once: the write path stores these encodings.
    ///
    /// - Throws: ``EventStoreError`` for the first invalid event.
    package func check(_ events: [Event]) throws -> [CheckedEvent] {
        let limit = configuration.maxEventBytes
        return try events.map { try CheckedEvent($0, limit: limit) }
    }

    /// ``check(_:)``, then the batch limits.
    private func checkBatch(_ events: [Event]) throws -> [CheckedEvent] {
        let checked = try check(events)
        let bytes = checked.reduce(0) { $0 + $1.byteCount }
        try Validation.batch(count: checked.count, bytes: bytes, configuration: configuration)
        return checked
    }
}
