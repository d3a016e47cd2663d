/// A condition on one property of a typed model, for ``TypedQuery/where(_:_:)``.
///
/// ```swift
/// notes.query().where(\.folder, .equals("work")).where(\.updatedAt, .greaterThan(lastWeek))
/// ```
///
/// Values are encoded as ``TypedCollection`` stores them (through `Codable`): a `Date` as the
/// number `JSONEncoder` writes, an enum by its raw value.
public struct TypedPredicate<V: Encodable>: Sendable {
    let make: @Sendable (String) throws -> Filter

    private static func one(_ value: V, _ filter: @escaping @Sendable (String, Value) -> Filter) -> TypedPredicate {
        let encoded = Result { try ModelCoding.value(of: value) }
        return TypedPredicate { field in filter(field, try encoded.get()) }
    }

    /// The property equals the value. For an optional property, `.equals(nil)` is
    /// ``isMissing``: a `nil` property is stored as no field.
    public static func equals(_ value: V) -> TypedPredicate {
        one(value) { $1 == .null ? .missing($0) : .equal($0, $1) }
    }
    /// The property does not equal the value. `nil` is refused (the query throws
    /// ``EventStoreError/Code/invalidQuery``): a `nil` property is stored as no field, and
    /// ``Filter/notEqual(_:_:)`` matches missing fields.
    public static func notEquals(_ value: V) -> TypedPredicate {
        let encoded = Result { try ModelCoding.value(of: value) }
        return TypedPredicate { field in
            let value = try encoded.get()
            guard value != .null else {
                throw EventStoreError(
                    .invalidQuery,
                    "notEquals(nil) on \(field): a nil property is stored as no field, and a filter cannot ask "
                        + "for a field that is present; filter on the values it may hold instead")
            }
            return .notEqual(field, value)
        }
    }
    /// The property is less than the value.
    public static func lessThan(_ value: V) -> TypedPredicate { one(value) { .less($0, $1) } }
    /// The property is less than or equal to the value.
    public static func atMost(_ value: V) -> TypedPredicate { one(value) { .lessOrEqual($0, $1) } }
    /// The property is greater than the value.
    public static func greaterThan(_ value: V) -> TypedPredicate { one(value) { .greater($0, $1) } }
    /// The property is greater than or equal to the value.
    public static func atLeast(_ value: V) -> TypedPredicate { one(value) { .greaterOrEqual($0, $1) } }
    /// The property lies within `lower...upper`.
    public static func between(_ lower: V, _ upper: V) -> TypedPredicate {
        let bounds = Result { (try ModelCoding.value(of: lower), try ModelCoding.value(of: upper)) }
        return TypedPredicate { field in
            let (lower, upper) = try bounds.get()
            return .between(field, lower, upper)
        }
    }
    /// The property equals one of the values.
    public static func isIn(_ values: [V]) -> TypedPredicate {
        let encoded = Result { try values.map { try ModelCoding.value(of: $0) } }
        return TypedPredicate { field in .oneOf(field, try encoded.get()) }
    }
    /// The property is missing or null (an optional property set to `nil`).
    public static var isMissing: TypedPredicate { TypedPredicate { .missing($0) } }
}

extension TypedPredicate where V: StringProtocol {
    /// The string property starts with `prefix`.
    public static func hasPrefix(_ prefix: String) -> TypedPredicate { TypedPredicate { .prefix($0, prefix) } }
}

/// A ``Query`` on a ``TypedCollection``, built from key paths; from ``TypedCollection/query()``.
///
/// ```swift
/// struct Task: Codable, Identifiable, Sendable { var id: String; var title: String; var done: Bool; var due: Double }
/// let tasks = store.collection(Task.self)
/// let page = try tasks.fetch(tasks.query().where(\.done, .equals(false)).sorted(by: \.due).limit(20))
/// ```
///
/// A key path must name a stored property whose coding key is its name (the default for
/// synthesized `Codable`); another key path (a computed or nested property) makes the query
/// throw ``EventStoreError/Code/invalidQuery`` when it runs.
public struct TypedQuery<Model: Codable & Identifiable & Sendable>: Sendable, Hashable where Model.ID: Sendable {
    /// The untyped query.
    public private(set) var query: Query
    private var problem: String?

    init(collection: String) {
        self.query = Query(collection)
    }

    /// The typed form of an untyped query.
    init(_ query: Query) {
        self.query = query
    }

    /// A query on the collection `collection` of `Model`s, for code that has no store at hand
    /// (a view's initializer, with the store in the environment); otherwise
    /// ``TypedCollection/query()``.
    ///
    /// ```swift
    /// let open = TypedQuery(Task.self, collection: "tasks").where(\.done, .equals(false)).sorted(by: \.due)
    /// ```
    public init(_ model: Model.Type, collection: String) {
        self.init(collection: collection)
    }

    /// The field `keyPath` names, or why it names none.
    private func field<V>(_ keyPath: KeyPath<Model, V>) -> (name: String?, problem: String?) {
        let names: (property: String, field: String)
        do {
            names = try ModelCoding.names(of: keyPath)
        } catch {
            return (nil, (error as? EventStoreError)?.message ?? "\(error)")
        }
        guard names.property != "id" else {
            return (
                nil,
                "the key path \(keyPath) names the model's id, which is the item's id and not one of its fields: "
                    + "read an item by its id instead"
            )
        }
        return (names.field, nil)
    }

    /// The query with a condition on one property added.
    public func `where`<V>(_ keyPath: KeyPath<Model, V>, _ predicate: TypedPredicate<V>) -> TypedQuery {
        var typed = self
        let (name, problem) = field(keyPath)
        guard let field = name else {
            typed.problem = typed.problem ?? problem
            return typed
        }
        do {
            typed.query = query.filter(try predicate.make(field))
        } catch let error as EventStoreError where error.code == .invalidQuery {
            typed.problem = typed.problem ?? error.message
        } catch {
            typed.problem = typed.problem ?? "cannot encode the value for \(field): \(error)"
        }
        return typed
    }

    /// The query with an untyped filter added (for `or` and the like).
    public func filter(_ filter: Filter) -> TypedQuery {
        var typed = self
        typed.query = query.filter(filter)
        return typed
    }

    /// The query with a property added to the sort.
    public func sorted<V>(by keyPath: KeyPath<Model, V>, _ direction: SortField.Direction = .ascending) -> TypedQuery {
        var typed = self
        let (name, problem) = field(keyPath)
        guard let field = name else {
            typed.problem = typed.problem ?? problem
            return typed
        }
        typed.query = query.sorted(by: field, direction)
        return typed
    }

    /// The query with a page size.
    public func limit(_ limit: Int?) -> TypedQuery {
        var typed = self
        typed.query = query.limit(limit)
        return typed
    }

    /// The query continuing after a cursor (``TypedPage/next``).
    public func after(_ cursor: String?) -> TypedQuery {
        var typed = self
        typed.query = query.after(cursor)
        return typed
    }

    /// The query allowing a scan when no index serves it (see ``Query/allowsScan``).
    public func allowingScan(_ allowed: Bool = true) -> TypedQuery {
        var typed = self
        typed.query = query.allowingScan(allowed)
        return typed
    }

    /// The untyped query, or the error a key path or value caused.
    func checked() throws -> Query {
        if let problem { throw EventStoreError(.invalidQuery, problem) }
        return query
    }
}

/// One page of a typed query's answer.
public struct TypedPage<Model: Sendable>: Sendable {
    /// The models, in the query's order.
    public var models: [Model]
    /// The cursor for the next page, or `nil` after the last page.
    public var next: String?
}

extension TypedCollection {
    /// A query on this collection (see ``TypedQuery``).
    public func query() -> TypedQuery<Model> { TypedQuery(collection: name) }

    /// Answers a typed query (see ``Store/query(_:)``).
    ///
    /// - Throws: As ``Store/query(_:)``; ``EventStoreError/Code/invalidQuery`` for a key path
    ///   that names no stored property; ``EventStoreError/Code/typeMismatch`` for an item that
    ///   does not decode as `Model`.
    public func fetch(_ query: TypedQuery<Model>) throws -> TypedPage<Model> {
        let query = try query.checked()
        let defaults = self.defaults
        // Each model decodes from its item's record in place: no dictionary of fields is built.
        let (models, next) = try store.read { reader in
            try QueryExecutor(reader: reader, query: query).page { id, record -> Model in
                try ModelCoding.model(id: id, members: .record(try record.indexed()), defaults: defaults) {
                    try record.item(collection: query.collection, id: id)
                }
            }
        }
        return TypedPage(models: models, next: next)
    }

    /// The number of models that match a typed query's filter (see ``Store/count(_:)``).
    public func count(_ query: TypedQuery<Model>) throws -> Int {
        try store.count(try query.checked())
    }

    /// A live typed query: the current page at once, then each changed page (see
    /// ``QueryObservation``).
    ///
    /// ```swift
    /// for try await page in tasks.observe(tasks.query().where(\.done, .equals(false)).sorted(by: \.due)) {
    ///     show(page.models)
    /// }
    /// ```
    public func observe(_ query: TypedQuery<Model>) -> AsyncThrowingStream<TypedPage<Model>, any Error> {
        let store = self.store
        let defaults = self.defaults
        let checked = Result { try query.checked() }
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await page in store.observe(try checked.get()) {
                        let models: [Model] = try page.items.map { try ModelCoding.model($0, defaults: defaults) }
                        continuation.yield(TypedPage(models: models, next: page.next))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
