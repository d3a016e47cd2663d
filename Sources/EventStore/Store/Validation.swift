/// Checks on names, fields and sizes, made once per change or event: ``Store/append(_:)-([Change])``
/// and ``Store/ingest(_:)-([Event])`` check before a transaction starts (bad input changes
/// nothing), ``StoreWriter`` checks what it is given directly, and `WriteSession` trusts what
/// reaches it.
enum Validation {
    static let maxCollectionBytes = 64
    static let maxItemBytes = 255
    static let maxFieldNameBytes = 128
    static let maxValueDepth = 32

    static func collection(_ name: String) throws {
        let utf8 = name.utf8
        guard !utf8.isEmpty else { throw EventStoreError(.invalidName, "collection name is empty") }
        guard utf8.count <= maxCollectionBytes else {
            throw EventStoreError(.invalidName, "collection name is \(utf8.count) bytes (limit \(maxCollectionBytes))")
        }
        for byte in utf8 {
            let allowed =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
            guard allowed else {
                throw EventStoreError(
                    .invalidName, "collection name \(name.debugDescription) may hold only letters, digits, '-', '_' and '.'")
            }
        }
    }

    static func item(_ id: String) throws {
        let utf8 = id.utf8
        guard !utf8.isEmpty else { throw EventStoreError(.invalidName, "item id is empty") }
        guard utf8.count <= maxItemBytes else {
            throw EventStoreError(.invalidName, "item id is \(utf8.count) bytes (limit \(maxItemBytes))")
        }
        guard !utf8.contains(0) else { throw EventStoreError(.invalidName, "item id holds a NUL character") }
    }

    static func fields(_ fields: [String: Value], operation: EventOperation) throws {
        switch operation {
        case .delete:
            guard fields.isEmpty else { throw EventStoreError(.invalidEvent, "a delete carries no fields") }
        case .patch:
            guard !fields.isEmpty else { throw EventStoreError(.invalidEvent, "a patch names no fields") }
        case .put:
            break
        }
        for (name, value) in fields {
            let utf8 = name.utf8
            guard !utf8.isEmpty else { throw EventStoreError(.invalidName, "field name is empty") }
            guard utf8.count <= maxFieldNameBytes else {
                throw EventStoreError(.invalidName, "field name is \(utf8.count) bytes (limit \(maxFieldNameBytes))")
            }
            guard !utf8.contains(0) else { throw EventStoreError(.invalidName, "field name holds a NUL character") }
            guard value.isFinite else {
                throw EventStoreError(.invalidEvent, "field \(name.debugDescription) holds a non-finite number")
            }
            guard depth(of: value) <= maxValueDepth else {
                throw EventStoreError(.invalidEvent, "field \(name.debugDescription) is nested deeper than \(maxValueDepth)")
            }
        }
    }

    static func depth(of value: Value) -> Int {
        switch value {
        case .array(let values): 1 + (values.map(depth).max() ?? 0)
        case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
        default: 0
        }
    }

    static func change(_ change: Change) throws {
        try collection(change.collection)
        try item(change.item)
        try fields(change.fields, operation: change.operation)
    }

    /// Checks a received event; returns its encoding (see ``CheckedEvent``).
    static func event(_ event: Event, limit: Int) throws -> [UInt8] {
        try collection(event.collection)
        try item(event.item)
        try fields(event.fields, operation: event.operation)
        guard event.id.sequence > 0 else { throw EventStoreError(.invalidEvent, "event \(event.id) has sequence 0") }
        guard event.hlc > .zero else { throw EventStoreError(.invalidEvent, "event \(event.id) has no clock stamp") }
        guard event.base <= event.hlc else {
            throw EventStoreError(.invalidEvent, "event \(event.id) has a base stamp after its own stamp")
        }
        let encoded = event.encoded()
        guard encoded.count <= limit else {
            throw EventStoreError(.eventTooLarge, "event \(event.id) is \(encoded.count) bytes (limit \(limit))")
        }
        return encoded
    }

    /// Checks the encoded size of the event a change would become. Its id, stamps and seq get
    /// their widest encodings, so a change that passes here fits when it is stamped.
    static func size(of change: Change, limit: Int) throws {
        let widest = HLCTimestamp(rawValue: .max)
        let event = Event(
            seq: .max, id: EventID(origin: ReplicaID(high: .max, low: .max), sequence: .max), hlc: widest, base: widest,
            collection: change.collection, item: change.item, operation: change.operation, fields: change.fields,
            schema: change.schema)
        let size = event.encoded().count
        guard size <= limit else {
            throw EventStoreError(
                .eventTooLarge, "event for \(change.collection)/\(change.item) would be \(size) bytes (limit \(limit))")
        }
    }

    /// Checks the size of a batch.
    static func batch(count: Int, bytes: Int, configuration: Store.Configuration) throws {
        guard count <= configuration.maxBatchEvents else {
            throw EventStoreError(.batchTooLarge, "batch of \(count) events (limit \(configuration.maxBatchEvents))")
        }
        guard bytes <= configuration.maxBatchBytes else {
            throw EventStoreError(.batchTooLarge, "batch of \(bytes) bytes (limit \(configuration.maxBatchBytes))")
        }
    }
}
