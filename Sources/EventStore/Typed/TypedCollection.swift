import Foundation

/// A collection of typed models: `Codable & Identifiable` values stored as items.
///
/// Each model's coding keys become the item's fields; the `id` becomes the item id (the string
/// or number it encodes to: a `String` as is, a `UUID` as its `uuidString`, an `Int` in decimal,
/// a `RawRepresentable` id its raw value; an id that encodes otherwise, or is not `Encodable`,
/// is refused with ``EventStoreError/Code/typeMismatch``) and is not stored as a field.
///
/// Models are encoded to fields and decoded from them directly, with the values `JSONEncoder`
/// and `JSONDecoder` would give (a whole number as an integer, a `Date` as seconds since 2001,
/// `Data` as base64 text), but without JSON in between; queries decode each model from its
/// item's record in place.
///
/// ```swift
/// struct Note: Codable, Identifiable, Sendable {
///     var id: String
///     var title: String
///     var tags: [String]
///     var done = false
/// }
/// let notes = store.collection(Note.self)            // the collection "Note"
/// let archive = store.collection(Note.self, named: "archived-notes")
/// try await notes.put(Note(id: "n1", title: "Groceries", tags: ["home"]))
/// try await notes.patch(id: "n1", \.done, to: true)
/// let note = try notes.get("n1")
/// let page = try notes.all(limit: 50)
/// ```
public struct TypedCollection<Model: Codable & Identifiable & Sendable>: Sendable
where Model.ID: Sendable {
    /// The store.
    public let store: Store
    /// The collection name.
    public let name: String

    /// A page of models from ``all(after:limit:)``.
    public struct Page: Sendable {
        /// The models, in id order.
        public var models: [Model]
        /// The cursor for the next page, or `nil` after the last page.
        public var next: String?
    }

    /// Replaces the model's item with the model's fields.
    @discardableResult
    public func put(_ model: Model) async throws -> Event {
        try await store.put(name, id: try ModelCoding.itemID(model.id), fields: try ModelCoding.fields(of: model))
    }

    /// Reads a model, lets `body` change it and writes what it changed, in one write
    /// transaction: a patch of the fields whose values differ (a field the model no longer
    /// encodes, an optional set to `nil`, is written as null), so that what other replicas added
    /// to its sets and counters in the meantime cannot be undone by it, and the fields its
    /// model does not know (written by a newer release of the application) stay.
    ///
    /// ```swift
    /// try await notes.update("n1") { note in note.tags.append("urgent") }
    /// ```
    ///
    /// Prefer it to ``get(_:)`` then ``put(_:)-(Model)`` when a model is edited some time after
    /// it was read (an edit screen open while sync runs), or by an application that may be older
    /// than others writing the store: a put replaces the whole item.
    ///
    /// - Returns: The event written, or `nil` when the item does not exist (`body` is not
    ///   called) or `body` changed nothing (nothing is written).
    /// - Throws: What `body` throws (nothing is written), or what decoding or writing the model throws.
    @discardableResult
    public func update(_ id: Model.ID, _ body: @escaping @Sendable (inout Model) throws -> Void) async throws -> Event?
    {
        let (name, key, defaults) = (self.name, try ModelCoding.itemID(id), self.defaults)
        return try await store.write { writer -> Event? in
            guard let item = try writer.item(name, key) else { return nil }
            var model: Model = try ModelCoding.model(item, defaults: defaults)
            let before = try ModelCoding.fields(of: model)
            try body(&model)
            let after = try ModelCoding.fields(of: model)
            var changed = after.filter { before[$0.key] != $0.value }
            for name in before.keys where after[name] == nil { changed[name] = .null }
            guard !changed.isEmpty else { return nil }
            return try writer.append(.patch(name, id: key, fields: changed, base: item.version))
        }
    }

    /// Replaces the items of several models in one atomic batch.
    @discardableResult
    public func put(_ models: [Model]) async throws -> [Event] {
        try await store.append(
            models.map { .put(name, id: try ModelCoding.itemID($0.id), fields: try ModelCoding.fields(of: $0)) })
    }

    /// Sets some fields of a model's item, named as in the model's coding keys.
    @discardableResult
    public func patch(id: Model.ID, fields: [String: Value]) async throws -> Event {
        try await store.patch(name, id: try ModelCoding.itemID(id), fields: fields)
    }

    /// Sets one property of a model's item, by key path.
    ///
    /// The key path must name a stored property; the field set is the property's coding key
    /// (see <doc:Queries#Key-paths-and-coding-keys>).
    ///
    /// - Throws: ``EventStoreError/Code/typeMismatch`` for a key path that names no field of the
    ///   model's items.
    @discardableResult
    public func patch<V: Encodable>(id: Model.ID, _ keyPath: KeyPath<Model, V>, to value: V) async throws -> Event {
        try await patch(id: id, fields: [try ModelCoding.field(of: keyPath): try ModelCoding.value(of: value)])
    }

    /// Deletes a model's item.
    @discardableResult
    public func delete(id: Model.ID) async throws -> Event {
        try await store.delete(name, id: try ModelCoding.itemID(id))
    }

    /// The model with `id`, or `nil` when its item does not exist.
    ///
    /// - Throws: ``EventStoreError/Code/typeMismatch`` naming the field and the types when the
    ///   item's fields do not decode as `Model`.
    public func get(_ id: Model.ID) throws -> Model? {
        try store.item(name, try ModelCoding.itemID(id)).map { try ModelCoding.model($0, defaults: defaults) }
    }

    /// A page of models in id order, after the cursor `after`.
    public func all(after cursor: String? = nil, limit: Int = 100) throws -> Page {
        let page = try store.read { try $0.items(in: name, after: cursor, limit: limit) }
        return Page(models: try page.items.map { try ModelCoding.model($0, defaults: defaults) }, next: page.next)
    }

    /// The values the collection's schema gives fields an item lacks.
    var defaults: [String: Value] { store.configuration.schemaRegistry.defaults(of: name) }

    /// The number of models in the collection.
    public func count() throws -> Int { try store.count(in: name) }
}

extension Store {
    /// A typed view of a collection.
    ///
    /// - Parameters:
    ///   - type: The model type.
    ///   - name: The collection name (letters, digits, `-`, `_`, `.`).
    public func collection<Model: Codable & Identifiable & Sendable>(_ type: Model.Type, named name: String)
        -> TypedCollection<Model> where Model.ID: Sendable
    {
        TypedCollection(store: self, name: name)
    }

    /// A typed view of the collection named after the model type: `collection(Note.self)` is
    /// the collection `Note`. Use ``collection(_:named:)`` for another name.
    public func collection<Model: Codable & Identifiable & Sendable>(_ type: Model.Type) -> TypedCollection<Model>
    where Model.ID: Sendable {
        TypedCollection(store: self, name: String(describing: Model.self))
    }
}

/// Converts models to fields and back through their `Codable` conformance.
enum ModelCoding {
    static func fields<Model: Encodable & Identifiable>(of model: Model) throws -> [String: Value] {
        guard case .object(var fields) = try value(of: model) else {
            throw EventStoreError(.typeMismatch, "\(Model.self) does not encode as an object of fields")
        }
        fields["id"] = nil
        return fields
    }

    /// The item id of a model's `id`: the string or number it encodes to.
    ///
    /// - Throws: ``EventStoreError/Code/typeMismatch`` for an id that is not `Encodable` or
    ///   encodes to something else (an object, an array…).
    static func itemID<ID>(_ id: ID) throws -> String {
        guard let encodable = id as? any Encodable else {
            throw EventStoreError(
                .typeMismatch,
                "the id type \(ID.self) is not Encodable: an item id is the string or number an id encodes to")
        }
        switch try value(of: encodable) {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return "\(number)"
        case let other:
            throw EventStoreError(
                .typeMismatch,
                "the id \(id) of type \(ID.self) encodes as \(other): an item id is the string or number an id encodes to"
            )
        }
    }

    /// The value a model or a property encodes to (see ``ModelEncoder``).
    static func value<V: Encodable>(of value: V) throws -> Value {
        do {
            return try ModelEncoder.encode(value)
        } catch {
            throw EventStoreError(.typeMismatch, "cannot encode \(V.self)", cause: error)
        }
    }

    /// The model an item decodes to, with `defaults` for the fields it lacks. Its `id` is the item
    /// id: as a string (`String`, `UUID`…),
    /// or, when the model wants a number there, as that number.
    static func model<Model: Decodable>(_ item: Item, defaults: [String: Value] = [:]) throws -> Model {
        try model(id: item.id, members: .fields(item.fields), defaults: defaults) { item }
    }

    /// The model that item `id` with `members` decodes to (see ``model(_:defaults:)``).
    ///
    /// - Parameter item: The item, for the message of a decoding error.
    static func model<Model: Decodable>(
        id: String, members: ModelDecoder.Members, defaults: [String: Value], item: () throws -> Item
    ) throws -> Model {
        func decode(_ id: Value) throws -> Model {
            try ModelDecoder.decode(Model.self, from: ModelDecoder.Object(members: members, defaults: defaults, id: id))
        }
        do {
            return try decode(.string(id))
        } catch let error as DecodingError {
            var failure = error
            if case .typeMismatch(_, let context) = error, context.codingPath.map(\.stringValue) == ["id"],
                let number = Int64(id).map(Value.int)
                    ?? Double(id).flatMap({ $0.isFinite ? Value.double($0) : Value?.none })
            {
                do {
                    return try decode(number)
                } catch let error as DecodingError {
                    failure = error
                }
            }
            throw EventStoreError(.typeMismatch, describe(failure, model: Model.self, item: try item()), cause: failure)
        }
    }

    static func describe<Model>(_ error: DecodingError, model: Model.Type, item: Item) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        let what = "\(item.collection)/\(item.id) as \(Model.self)"
        switch error {
        case .typeMismatch(let type, let context):
            let field = path(context)
            let found = context.codingPath.first.flatMap { item.fields[$0.stringValue]?.kindName } ?? "another type"
            return "cannot decode \(what): field '\(field)' should be \(type) but holds \(found)"
        case .valueNotFound(let type, let context):
            return "cannot decode \(what): field '\(path(context))' should be \(type) but is null"
        case .keyNotFound(let key, _):
            return "cannot decode \(what): field '\(key.stringValue)' is missing"
        case .dataCorrupted(let context):
            return "cannot decode \(what): field '\(path(context))': \(context.debugDescription)"
        @unknown default:
            return "cannot decode \(what): \(error)"
        }
    }
}
