@testable import EventStore

/// An independent model of query semantics: what a query's answer must be, computed by
/// filtering and sorting every item of the collection, without the index key encoding.
enum QueryReference {
    /// The type rank of a value: missing < null < false < true < numbers < strings < arrays < objects.
    static func rank(_ value: Value?) -> Int {
        switch value {
        case nil: 0
        case .null?: 1
        case .bool(false)?: 2
        case .bool(true)?: 3
        case .int?, .double?: 4
        case .string?: 5
        case .array?: 6
        case .object?: 7
        }
    }

    /// Exact numeric comparison of an integer and a double.
    static func compare(_ integer: Int64, _ double: Double) -> Int {
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let floor = double.rounded(.down)
        let whole = Int64(floor)
        if integer < whole { return -1 }
        if integer > whole { return 1 }
        return floor == double ? 0 : -1
    }

    static func compare(_ lhs: Value?, _ rhs: Value?) -> Int {
        let (left, right) = (rank(lhs), rank(rhs))
        if left != right { return left < right ? -1 : 1 }
        switch (lhs, rhs) {
        case (.int(let a)?, .int(let b)?): return a == b ? 0 : (a < b ? -1 : 1)
        case (.double(let a)?, .double(let b)?): return a == b ? 0 : (a < b ? -1 : 1)
        case (.int(let a)?, .double(let b)?): return compare(a, b)
        case (.double(let a)?, .int(let b)?): return -compare(b, a)
        case (.string(let a)?, .string(let b)?):
            if a.utf8.elementsEqual(b.utf8) { return 0 }
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        case (.array?, .array?), (.object?, .object?):
            // Arrays and objects order by their encoding: an unspecified but fixed order.
            let (a, b) = (IndexKey.encoded(lhs), IndexKey.encoded(rhs))
            return a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        default: return 0
        }
    }

    static func sameType(_ value: Value?, _ bound: Value) -> Bool {
        let (a, b) = (rank(value), rank(bound))
        return a == b || (a >= 2 && a <= 3 && b >= 2 && b <= 3)
    }

    static func matches(_ filter: Filter, _ fields: [String: Value]) -> Bool {
        switch filter {
        case .equal(let field, let value): return compare(fields[field], value) == 0
        case .notEqual(let field, let value): return compare(fields[field], value) != 0
        case .less(let field, let bound): return sameType(fields[field], bound) && compare(fields[field], bound) < 0
        case .lessOrEqual(let field, let bound):
            return sameType(fields[field], bound) && compare(fields[field], bound) <= 0
        case .greater(let field, let bound): return sameType(fields[field], bound) && compare(fields[field], bound) > 0
        case .greaterOrEqual(let field, let bound):
            return sameType(fields[field], bound) && compare(fields[field], bound) >= 0
        case .between(let field, let lower, let upper):
            return sameType(fields[field], lower) && sameType(fields[field], upper)
                && compare(fields[field], lower) >= 0 && compare(fields[field], upper) <= 0
        case .oneOf(let field, let values): return values.contains { compare(fields[field], $0) == 0 }
        case .prefix(let field, let prefix):
            if case .string(let string)? = fields[field] { return string.utf8.starts(with: prefix.utf8) }
            return false
        case .missing(let field): return fields[field] == nil || fields[field] == .null
        case .and(let filters): return filters.allSatisfy { matches($0, fields) }
        case .or(let filters): return filters.contains { matches($0, fields) }
        }
    }

    /// The items that match, in `order` then by id (in the last field's direction).
    static func answer(_ items: [Item], filter: Filter?, order: [SortField]) -> [Item] {
        items.filter { item in filter.map { matches($0, item.fields) } ?? true }.sorted { lhs, rhs in
            for field in order {
                let c = compare(lhs.fields[field.field], rhs.fields[field.field])
                if c != 0 { return field.direction == .ascending ? c < 0 : c > 0 }
            }
            let idOrder = lhs.id.utf8.lexicographicallyPrecedes(rhs.id.utf8)
            return order.last?.direction == .descending ? !idOrder && lhs.id != rhs.id : idOrder
        }
    }

    /// Every item of a collection.
    static func allItems(_ store: Store, _ collection: String) throws -> [Item] {
        try store.read { reader in
            var items: [Item] = []
            var cursor: String?
            repeat {
                let page = try reader.items(in: collection, after: cursor, limit: 500)
                items += page.items
                cursor = page.next
            } while cursor != nil
            return items
        }
    }

    /// Every page of a query, following cursors.
    /// An item of the property tests as a typed model (read from its record in place).
    struct Row: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var status: Value?
        var due: Value?
        var title: Value?
        var other: Value?

        init(id: String, status: Value?, due: Value?, title: Value?, other: Value?) {
            (self.id, self.status, self.due, self.title, self.other) = (id, status, due, title, other)
        }

        /// The model an item decodes to: a missing or null field is `nil`.
        init(_ item: Item) {
            func field(_ name: String) -> Value? {
                guard let value = item.fields[name], value != .null else { return Optional.none }
                return value
            }
            self.init(
                id: item.id, status: field("status"), due: field("due"), title: field("title"), other: field("other"))
        }
    }

    /// Every page of a query through ``TypedCollection/fetch(_:)``.
    static func allTypedPages(_ store: Store, _ query: Query, maxPages: Int = 10_000) throws -> [Row] {
        let rows = store.collection(Row.self, named: query.collection)
        var models: [Row] = []
        var query = query
        var pages = 0
        while true {
            let page = try rows.fetch(TypedQuery(query))
            models += page.models
            pages += 1
            guard let next = page.next, pages < maxPages else { return models }
            query = query.after(next)
        }
    }

    static func allPages(_ store: Store, _ query: Query, maxPages: Int = 10_000) throws -> [Item] {
        var items: [Item] = []
        var query = query
        var pages = 0
        while true {
            let page = try store.query(query)
            items += page.items
            pages += 1
            guard let next = page.next, pages < maxPages else { return items }
            query = query.after(next)
        }
    }
}
