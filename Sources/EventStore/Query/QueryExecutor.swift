import LMDB

/// Runs a planned query on one read snapshot.
///
/// A class: the closures that read each row capture it by reference, not its fields by copy.
final class QueryExecutor {
    /// One answer row: the number of its element (see ``Make``), its id and its values of the
    /// order fields, when they were needed (see ``row(_:_:_:orderValues:)``).
    struct Row {
        var made: Int
        var id: String
        var values: [Value?]?
    }

    /// Makes an answer element of an item that exists and passes the filter, from its id and
    /// its record (valid during the call), and returns the element's number among those it
    /// made. Not generic, so that the executor is compiled once, for every element type.
    typealias Make = (_ id: String, _ record: ItemRecordView) throws -> Int

    let reader: StoreReader
    let query: Query
    let planned: QueryPlanner.Planned
    /// The key prefix of the collection's items.
    let itemPrefix: [UInt8]
    /// The fields the residual filter reads.
    private let residualFields: Set<String>

    var plan: QueryPlan { planned.plan }

    init(reader: StoreReader, query: Query) throws {
        self.reader = reader
        self.query = query
        self.planned = try QueryPlanner.plan(query, indexes: reader.store.configuration.indexes)
        self.itemPrefix = Keys.collectionPrefix(query.collection)
        self.residualFields = planned.plan.residual?.fields ?? []
    }

    // MARK: Pages

    func page() throws -> QueryPage {
        let collection = query.collection
        var template = FieldsTemplate()
        let (items, next) = try page { id, record in
            try record.item(collection: collection, id: id, template: &template)
        }
        return QueryPage(items: items, next: next)
    }

    /// The page's elements, made by `make` from each item's record, in the plan's order, and
    /// the cursor of the next page.
    func page<Element>(_ make: (_ id: String, _ record: ItemRecordView) throws -> Element) throws
        -> (elements: [Element], next: String?)
    {
        var made: [Element] = []
        made.reserveCapacity(query.limit.map { min($0, 1_023) + 1 } ?? 64)
        let (order, next) = try page { id, record in
            made.append(try make(id, record))
            return made.count - 1
        }
        // Most pages keep their rows in the order they were made: no copy then.
        if order.elementsEqual(0..<order.count) {
            made.removeLast(made.count - order.count)
            return (made, next)
        }
        return (order.map { made[$0] }, next)
    }

    /// The numbers of the elements (see ``Make``) that form the page, in the plan's order, and
    /// the cursor of the next page.
    private func page(_ make: Make) throws -> (order: [Int], next: String?) {
        let fingerprint = QueryCursor.fingerprint(query, plan: plan)
        let after = try query.after.map {
            try QueryCursor(token: $0, fingerprint: fingerprint, valueCount: plan.order.count)
        }
        // One row past the limit tells whether there is a next page (a limit of `Int.max` is all).
        let wanted = query.limit.map { $0 == .max ? .max : $0 + 1 } ?? .max
        var rows =
            plan.index == nil
            ? try scanRows(after: after, wanted: wanted, make) : try indexRows(after: after, wanted: wanted, make)
        var next: String?
        if let limit = query.limit, rows.count > limit {
            rows.removeLast(rows.count - limit)
            if let last = rows.last {
                next = QueryCursor(values: try orderValues(of: last), id: last.id).token(fingerprint: fingerprint)
            }
        }
        return (rows.map(\.made), next)
    }

    /// The number of items that match the filter (limit and cursor aside).
    func count() throws -> Int {
        guard let index = plan.index else {
            var count = 0
            try reader.forEachItemRecord(in: query.collection) { _, record in
                if try matches(ItemRecordView(record)) { count += 1 }
                return true
            }
            return count
        }
        let database = try indexDatabase(index)
        var count = 0
        if plan.residual == nil {
            try forEachKey(in: database) { _ in
                count += 1
                return true
            }
            return count
        }
        let skipped = planned.prefix.count
        try forEachKey(in: database) { key in
            let id = try QueryExecutor.splitKey(
                key, from: skipped, components: index.fields.count - plan.equalityFields
            ).id
            if try reader.withItemRecord(prefix: itemPrefix, id, { try matches(ItemRecordView($0)) }) == true {
                count += 1
            }
            return true
        }
        return count
    }

    // MARK: Index

    private func indexRows(after: QueryCursor?, wanted: Int, _ make: Make) throws -> [Row] {
        guard let index = plan.index else { return [] }
        let database = try indexDatabase(index)
        var start = planned.start
        var end = planned.end
        if let after {
            // Resume at the cursor's row (or the start of its truncated group); rows up to it
            // are skipped by value below.
            var seek = planned.prefix
            var complete = true
            for value in after.values where complete {
                complete = !IndexKey.append(value, capacity: planned.capacity, to: &seek)
            }
            if complete { seek.append(contentsOf: after.id.utf8) }
            if planned.descending {
                if let bound = IndexKey.successor(of: seek), end.map({ bound.lexicographicallyPrecedes($0) }) ?? true {
                    end = bound
                }
            } else if start.lexicographicallyPrecedes(seek) {
                start = seek
            }
        }
        var gatherer = IndexRowGatherer(
            executor: self, components: index.fields.count - plan.equalityFields, wanted: wanted, resume: after)
        try forEachKey(in: database, start: start, end: end) { key in try gatherer.take(key, make) }
        try gatherer.flush(make)
        return gatherer.rows
    }

    /// The rows of an index walk, gathered key by key: one value, which the walk's closure
    /// accesses once per key (captured variables would each pay a dynamic exclusivity check at
    /// every access).
    private struct IndexRowGatherer {
        let executor: QueryExecutor
        /// The index's fields after those the filter fixes.
        let components: Int
        let wanted: Int
        /// The cursor's row, while rows up to it are still being skipped.
        var resume: QueryCursor?
        var rows: [Row] = []
        /// The rows of a truncated group, whose order only their items' values tell.
        var pending: (group: [UInt8], ids: [String])?

        /// Takes the row of one index key; `false` once the page is full.
        mutating func take(_ key: UnsafeRawBufferPointer, _ make: Make) throws -> Bool {
            let (id, groupEnd) = try QueryExecutor.splitKey(
                key, from: executor.planned.prefix.count, components: components)
            if let groupEnd {
                let group = Array(key[..<groupEnd])
                if pending?.group == group {
                    pending?.ids.append(id)
                } else {
                    try flush(make)
                    pending = (group, [id])
                }
            } else {
                try flush(make)
                // The index orders these rows: their values matter only while resuming after a cursor.
                if let row = try executor.row(id, make, orderValues: resume != nil) { emit([row]) }
            }
            return rows.count < wanted
        }

        /// Emits the pending group's rows, sorted by their values.
        mutating func flush(_ make: Make) throws {
            guard let group = pending else { return }
            pending = nil
            let grouped = try group.ids.compactMap { try executor.row($0, make, orderValues: true) }
            emit(grouped.sorted(by: executor.precedes))
        }

        private mutating func emit(_ candidates: [Row]) {
            for row in candidates where rows.count < wanted {
                if let cursor = resume {
                    guard executor.follows(row, cursor) else { continue }
                    resume = nil
                }
                rows.append(row)
            }
        }
    }

    /// The index database (a store that records an index has one).
    private func indexDatabase(_ index: IndexDefinition) throws -> Database {
        guard let database = try reader.projection.indexes else {
            throw EventStoreError(.corrupt, "the store records the index \(index.name) but has no index database")
        }
        return database
    }

    /// Calls `body` with each live entry key of the plan's range, in the plan's direction, until
    /// it returns `false` (the newest run holding a key decides it: see ``IndexRuns``).
    private func forEachKey(
        in database: Database, start: [UInt8]? = nil, end: [UInt8]?? = nil,
        _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try IndexRunWalk.withWalk(
            overRunsListedIn: try reader.projection.state, in: database, tx: reader.tx, start: start ?? planned.start,
            end: end ?? planned.end, descending: planned.descending
        ) { walk in try walk.forEachLive(body) }
    }

    /// The item id at the end of an index key, and the end of its first truncated order
    /// component (the group whose order only the items' values tell), if any.
    static func splitKey(_ key: UnsafeRawBufferPointer, from offset: Int, components: Int) throws
        -> (id: String, groupEnd: Int?)
    {
        var offset = offset
        var groupEnd: Int?
        for _ in 0..<components {
            let (end, truncated) = try IndexKey.component(in: key, at: offset)
            if truncated && groupEnd == nil { groupEnd = end }
            offset = end
        }
        guard offset <= key.count,
            let id = ByteReader.string(validating: UnsafeRawBufferPointer(rebasing: key[offset...]))
        else { throw EventStoreError(.corrupt, "index key with an invalid item id") }
        return (id, groupEnd)
    }

    // MARK: Scan

    private func scanRows(after: QueryCursor?, wanted: Int, _ make: Make) throws -> [Row] {
        var rows: [Row] = []
        try reader.forEachItemRecord(in: query.collection) { id, record in
            if let row = try row(id, ItemRecordView(record), make, orderValues: true) { rows.append(row) }
            return true
        }
        rows.sort(by: precedes)
        if let after { rows.removeAll { !follows($0, after) } }
        return Array(rows.prefix(wanted))
    }

    // MARK: Rows

    /// The row of item `id` when it exists and passes the residual filter.
    fileprivate func row(_ id: String, _ make: Make, orderValues: Bool) throws -> Row? {
        try reader.withItemRecord(prefix: itemPrefix, id) {
            try row(id, ItemRecordView($0), make, orderValues: orderValues)
        } ?? nil
    }

    /// The row of an item when it exists and passes the residual filter, with its values of the
    /// order fields when `orderValues` (rows sorted or compared here need them; rows in the
    /// order of an index key that holds their values whole need them only for a cursor).
    private func row(_ id: String, _ record: ItemRecordView, _ make: Make, orderValues: Bool) throws -> Row? {
        guard try matches(record) else { return nil }
        let values = orderValues ? try self.orderValues(in: record) : nil
        return Row(made: try make(id, record), id: id, values: values)
    }

    /// The row's values of the order fields: read again from its item when the row was made
    /// without them (the last row of a page, for the next page's cursor).
    private func orderValues(of row: Row) throws -> [Value?] {
        if let values = row.values { return values }
        guard
            let values = try reader.withItemRecord(
                prefix: itemPrefix, row.id, { try orderValues(in: ItemRecordView($0)) })
        else { throw EventStoreError(.corrupt, "item \(row.id) of a query page has no record") }
        return values
    }

    /// An item's values of the order fields.
    private func orderValues(in record: ItemRecordView) throws -> [Value?] {
        try plan.order.map { try record.value($0.field) }
    }

    /// Whether an item exists and passes the residual filter.
    private func matches(_ record: ItemRecordView) throws -> Bool {
        guard record.exists else { return false }
        guard let residual = plan.residual else { return true }
        return residual.matches(try record.fields(only: residualFields))
    }

    /// Whether `lhs` comes before `rhs` in the plan's order (both made with their values).
    func precedes(_ lhs: Row, _ rhs: Row) -> Bool {
        order(lhs.values ?? [], lhs.id, rhs.values ?? [], rhs.id) < 0
    }

    /// Whether `row` (made with its values) comes strictly after the cursor's row.
    fileprivate func follows(_ row: Row, _ cursor: QueryCursor) -> Bool {
        order(row.values ?? [], row.id, cursor.values, cursor.id) > 0
    }

    private func order(_ lhs: [Value?], _ lhsID: String, _ rhs: [Value?], _ rhsID: String) -> Int {
        QueryExecutor.order(plan.order, lhs, lhsID, rhs, rhsID)
    }

    /// Negative, zero or positive as the row (`lhs`, `lhsID`) comes before, is, or comes after
    /// the row (`rhs`, `rhsID`) in a plan's `order` (then by id in the last field's direction).
    static func order(_ order: [SortField], _ lhs: [Value?], _ lhsID: String, _ rhs: [Value?], _ rhsID: String) -> Int {
        for (index, field) in order.enumerated() {
            let result = ValueOrder.compare(lhs[index], rhs[index])
            if result != 0 { return field.direction == .ascending ? result : -result }
        }
        if lhsID == rhsID { return 0 }
        let result = utf8Less(lhsID, rhsID) ? -1 : 1
        return order.last?.direction == .descending ? -result : result
    }
}
