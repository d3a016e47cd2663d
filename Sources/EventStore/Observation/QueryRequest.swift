/// What a ``LiveQuery`` answers: a ``Query``, whose elements are ``Item``s, or a ``TypedQuery``,
/// whose elements are models.
///
/// ```swift
/// let open = LiveQuery(Query("tasks").filter(.equal("done", false)).sorted(by: "due"), in: store)
/// let typed = LiveQuery(tasks.query().where(\.done, .equals(false)).sorted(by: \.due), in: store)
/// ```
public protocol QueryRequest: Sendable, Hashable {
    /// What one row of the answer becomes.
    associatedtype Element: Sendable

    /// The untyped query to run.
    ///
    /// - Throws: ``EventStoreError/Code/invalidQuery`` for a request that names no field (a key
    ///   path to a computed property).
    func resolvedQuery() throws -> Query

    /// The elements of one page of the answer from `store`, in its order.
    ///
    /// - Throws: ``EventStoreError/Code/typeMismatch`` for an item that does not decode.
    func elements(of page: QueryPage, in store: Store) throws -> [Element]
}

extension Query: QueryRequest {
    /// The query itself.
    public func resolvedQuery() throws -> Query { self }

    /// The page's items.
    public func elements(of page: QueryPage, in store: Store) throws -> [Item] { page.items }
}

extension TypedQuery: QueryRequest {
    /// The untyped query, or the error a key path or value caused.
    public func resolvedQuery() throws -> Query { try checked() }

    /// The page's items decoded as models (with the defaults of the collection's schema).
    public func elements(of page: QueryPage, in store: Store) throws -> [Model] {
        let defaults = store.configuration.schemaRegistry.defaults(of: query.collection)
        return try page.items.map { try ModelCoding.model($0, defaults: defaults) }
    }
}
