/// A live query: the current answer to a ``Query`` at once, then a new answer each time a commit
/// changes it; from ``Store/observe(_:)``.
///
/// ```swift
/// let open = Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(50)
/// for try await page in store.observe(open) {
///     render(page.items)
/// }
/// ```
///
/// The iterator subscribes to the store's commit notification when it is made (no polling, and
/// nothing committed after that is missed). After each notification it reads the events it has
/// not seen; only when one of them may change the answer — it touches the query's collection,
/// and its item is in the last answer, or matches the filter now and (when the last answer was
/// one page of several) sorts before that page's last row, or (then too) no longer matches or
/// exists, as the only row after the page would, taking the next cursor with it — does it run
/// the query again, on a fresh snapshot, and it yields only when the answer differs from the
/// last one it yielded (other items, other field values to the byte, or another next cursor; a
/// rewrite that changes no field counts as no change). Notifications that arrive while the consumer is busy are coalesced:
/// a burst of commits costs one re-run. The sequence ends when the store closes; it throws what
/// the query throws (such as ``EventStoreError/Code/indexRequired``).
public struct QueryObservation: AsyncSequence, Sendable {
    /// The element type: one page of the answer.
    public typealias Element = QueryPage

    let store: Store
    let query: Query

    /// Makes the iterator; it subscribes to commits at once.
    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, query: query, signals: store.commits.subscribe().makeAsyncIterator())
    }

    /// Yields the current answer, then each changed one.
    public struct Iterator: AsyncIteratorProtocol {
        let store: Store
        let query: Query
        var signals: AsyncStream<UInt64>.AsyncIterator
        var last: QueryPage?
        var seen: UInt64 = 0

        init(store: Store, query: Query, signals: AsyncStream<UInt64>.AsyncIterator) {
            self.store = store
            self.query = query
            self.signals = signals
        }

        /// The current answer on the first call; then the next changed answer, waiting for the
        /// commits that change it; `nil` once the store is closed.
        public mutating func next() async throws -> QueryPage? {
            guard let previous = last else {
                let (page, head) = try run()
                last = page
                seen = head
                return page
            }
            while !store.isClosed {
                if try mayChange(previous) {
                    let (page, head) = try run()
                    seen = head
                    if !QueryObservation.sameAnswer(page, previous) {
                        last = page
                        return page
                    }
                    continue
                }
                guard await signals.next(isolation: #isolation) != nil else { return nil }
            }
            return nil
        }

        /// The answer and the head of the snapshot it was read from.
        private func run() throws -> (QueryPage, UInt64) {
            try store.read { reader in (try reader.query(query), try reader.head()) }
        }

        /// Whether an event after ``seen`` may change the answer `previous`; moves ``seen`` past
        /// the events that cannot.
        ///
        /// An event on another collection cannot. Nor can one on an item that is not in
        /// `previous` and, now, does not exist, does not match the filter, or — when `previous`
        /// is one page of several — sorts after its last row: it was not part of the answer and
        /// is not now. (An item that moves into or out of the answer is caught by its own event.)
        private mutating func mayChange(_ previous: QueryPage) throws -> Bool {
            let start = seen + 1
            let collection = query.collection
            let filter = query.filter
            let order = try store.plan(query).order
            let members = Set(previous.items.map(\.id))
            let boundary = previous.next == nil ? nil : previous.items.last
            let boundaryValues = boundary.map { last in order.map { last.fields[$0.field] } }
            let (changes, last) = try store.read { reader -> (Bool, UInt64?) in
                var changes = false
                var last: UInt64?
                let schemas = store.configuration.schemaRegistry
                try reader.forEachEvent(from: start) { logged in
                    // The event as the items took it (an upcaster may move an item to another
                    // collection; an event held back for a newer schema changed nothing). One the
                    // schema cannot read may have changed anything.
                    let interpreted: Event?
                    do {
                        interpreted = try schemas.interpret(logged)
                    } catch {
                        changes = true
                        return false
                    }
                    if let event = interpreted, event.collection == collection {
                        if members.contains(event.item) {
                            changes = true
                            return false
                        }
                        if let item = try reader.itemValues(collection, event.item), item.exists,
                            filter?.matches(item.fields) ?? true
                        {
                            guard let boundary, let boundaryValues else {
                                changes = true
                                return false
                            }
                            let values = order.map { item.fields[$0.field] }
                            if QueryExecutor.order(order, values, event.item, boundaryValues, boundary.id) < 0 {
                                changes = true
                                return false
                            }
                        } else if boundary != nil {
                            // It may have been the only row after the page: without it, the
                            // answer has no next cursor.
                            changes = true
                            return false
                        }
                    }
                    last = logged.seq
                    return true
                }
                return (changes, last)
            }
            if let last { seen = last }
            return changes
        }
    }

    /// Whether two pages hold the same items with the same fields, to the byte, and the same
    /// next cursor. (`==` on values also equates strings spelt with other bytes that are
    /// canonically equivalent: a change from one spelling to the other is a change.)
    static func sameAnswer(_ lhs: QueryPage, _ rhs: QueryPage) -> Bool {
        func encoded(_ fields: [String: Value]) -> [UInt8] {
            var writer = ByteWriter(capacity: 256)
            writer.write(fields: fields)
            return writer.bytes
        }
        return lhs.next == rhs.next && lhs.items.count == rhs.items.count
            && zip(lhs.items, rhs.items).allSatisfy {
                $0.id.utf8.elementsEqual($1.id.utf8) && $0.fields == $1.fields
                    && encoded($0.fields) == encoded($1.fields)
            }
    }
}

extension Store {
    /// A live query: the current answer at once, then each changed answer (see
    /// ``QueryObservation``).
    ///
    /// ```swift
    /// for try await page in store.observe(Query("notes").filter(.equal("folder", "work")).sorted(by: "title")) {
    ///     print(page.items.map(\.id))
    /// }
    /// ```
    public func observe(_ query: Query) -> QueryObservation {
        QueryObservation(store: self, query: query)
    }
}
