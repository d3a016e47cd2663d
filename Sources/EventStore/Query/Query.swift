/// A question about one collection's items: a filter, an order, a page size and where to
/// continue — answered from a declared index (see <doc:Queries>).
///
/// ```swift
/// let query = Query("tasks")
///     .filter(.equal("done", false))
///     .sorted(by: "due")
///     .limit(50)
/// let page = try store.query(query)
/// for item in page.items { print(item.id, item["due"] ?? nil) }
/// if let next = page.next { let more = try store.query(query.after(next)) }
/// ```
///
/// A query runs on one read snapshot and never waits for writers. Which index answers it
/// follows one rule (see ``QueryPlan``); a query no declared index can serve throws
/// ``EventStoreError/Code/indexRequired`` naming the index to declare, unless it allows a scan
/// (``allowsScan``).
public struct Query: Sendable, Hashable {
    /// The collection to query.
    public var collection: String
    /// The condition items must meet (`nil`: every item).
    public var filter: Filter?
    /// The order of the results, most significant first. Ties are broken by the remaining
    /// fields of the index that serves the query, then by item id (see ``QueryPlan/order``).
    public var sort: [SortField]
    /// The most items one page holds (`nil`: all).
    public var limit: Int?
    /// A cursor from a previous page (``QueryPage/next``): the page starts after that row.
    public var after: String?
    /// Whether a query no index can serve may read every item of the collection instead of
    /// failing with ``EventStoreError/Code/indexRequired``. A scan costs one read and decode of
    /// every item of the collection, and an in-memory sort, per query (and per page).
    public var allowsScan: Bool

    /// Creates a query over `collection`.
    public init(
        _ collection: String, filter: Filter? = nil, sort: [SortField] = [], limit: Int? = nil, after: String? = nil,
        allowsScan: Bool = false
    ) {
        self.collection = collection
        self.filter = filter
        self.sort = sort
        self.limit = limit
        self.after = after
        self.allowsScan = allowsScan
    }

    /// The query with `filter` added: it must hold as well as the filters already set.
    public func filter(_ filter: Filter) -> Query {
        var query = self
        query.filter = self.filter.map { .and($0.conjuncts + filter.conjuncts) } ?? filter
        return query
    }

    /// The query with `field` added to the sort, after the fields already set.
    public func sorted(by field: String, _ direction: SortField.Direction = .ascending) -> Query {
        var query = self
        query.sort.append(SortField(field, direction))
        return query
    }

    /// The query with a page size.
    public func limit(_ limit: Int?) -> Query {
        var query = self
        query.limit = limit
        return query
    }

    /// The query continuing after `cursor` (``QueryPage/next``).
    public func after(_ cursor: String?) -> Query {
        var query = self
        query.after = cursor
        return query
    }

    /// The query allowing a scan when no index serves it (see ``allowsScan``).
    public func allowingScan(_ allowed: Bool = true) -> Query {
        var query = self
        query.allowsScan = allowed
        return query
    }
}

/// One field of a query's order.
public struct SortField: Sendable, Hashable, CustomStringConvertible {
    /// A sort direction.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// Smallest first.
        case ascending
        /// Greatest first.
        case descending
    }

    /// The field.
    public var field: String
    /// The direction.
    public var direction: Direction

    /// Creates a sort field.
    public init(_ field: String, _ direction: Direction = .ascending) {
        self.field = field
        self.direction = direction
    }

    /// `field` or `field:desc`.
    public var description: String { direction == .ascending ? field : field + ":desc" }
}

/// One page of a query's answer.
public struct QueryPage: Sendable, Hashable {
    /// The items, in the query's order.
    public var items: [Item]
    /// The cursor for the next page (``Query/after(_:)``), or `nil` after the last page.
    public var next: String?
}
