extension StoreReader {
    /// Answers a query on this reader's snapshot (see ``Query``).
    ///
    /// ```swift
    /// let page = try store.read { try $0.query(Query("tasks").filter(.equal("done", false)).sorted(by: "due").limit(20)) }
    /// ```
    ///
    /// - Returns: Up to ``Query/limit`` items in the plan's order, and a cursor when more follow.
    /// - Throws: ``EventStoreError/Code/indexRequired`` when no declared index serves the query
    ///   and it does not allow a scan; ``EventStoreError/Code/invalidQuery`` for a malformed
    ///   query or a cursor that is damaged or belongs to another query.
    public func query(_ query: Query) throws -> QueryPage {
        try QueryExecutor(reader: self, query: query).page()
    }

    /// The number of items that match a query's filter; its limit and cursor do not count.
    ///
    /// When the chosen index's key range decides the filter alone (``QueryPlan/residual`` is
    /// `nil`), counting reads only index keys, never items.
    ///
    /// - Throws: As ``query(_:)``.
    public func count(_ query: Query) throws -> Int {
        try QueryExecutor(reader: self, query: query).count()
    }

    /// How a query would be answered (which index, range and order), without running it.
    ///
    /// - Throws: As ``query(_:)``.
    public func plan(_ query: Query) throws -> QueryPlan {
        try QueryPlanner.plan(query, indexes: store.configuration.indexes).plan
    }

    /// Searches one collection's full-text index for `text` among the items that match `filter`
    /// (search within a folder, within open tasks), best first.
    ///
    /// The filter is checked on every hit (``SearchQuery/filter``): no index is needed, and the
    /// cost grows with the number of hits.
    ///
    /// ```swift
    /// let hits = try store.search("sync", in: "notes", filter: .equal("folder", "work"))
    /// ```
    public func search(_ text: String, in collection: String, filter: Filter?, limit: Int = 20) throws -> [SearchResult]
    {
        try search(SearchQuery(text, collection: collection, limit: limit, filter: filter))
    }
}

extension Store {
    /// Answers a query on a read snapshot; it never waits for writers (see ``Query``).
    ///
    /// ```swift
    /// let query = Query("notes").filter(.equal("folder", "work")).sorted(by: "updatedAt", .descending).limit(50)
    /// let page = try store.query(query)
    /// ```
    ///
    /// - Throws: As ``StoreReader/query(_:)``.
    public func query(_ query: Query) throws -> QueryPage {
        try read { try $0.query(query) }
    }

    /// The number of items that match a query's filter (see ``StoreReader/count(_:)``).
    public func count(_ query: Query) throws -> Int {
        try read { try $0.count(query) }
    }

    /// How a query would be answered (see ``QueryPlan``).
    public func plan(_ query: Query) throws -> QueryPlan {
        try read { try $0.plan(query) }
    }

    /// Full-text search within the items that match a filter (see
    /// ``StoreReader/search(_:in:filter:limit:)``).
    public func search(_ text: String, in collection: String, filter: Filter?, limit: Int = 20) throws -> [SearchResult]
    {
        try read { try $0.search(text, in: collection, filter: filter, limit: limit) }
    }
}
