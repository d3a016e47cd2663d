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
                    .invalidName,
                    "collection name \(name.debugDescription) may hold only letters, digits, '-', '_' and '.'")
            }
        }
    }

    static func item(_ id: String) throws {
        try text(id, named: "item id", limit: maxItemBytes)
    }

    /// Checks a name of 1 to `limit` bytes of UTF-8 without NUL.
    private static func text(_ text: String, named what: String, limit: Int) throws {
        var text = text
        // The bytes themselves: searching them is a loop over memory, not over the string's view.
        try text.withUTF8 { utf8 in
            guard !utf8.isEmpty else { throw EventStoreError(.invalidName, "\(what) is empty") }
            guard utf8.count <= limit else {
                throw EventStoreError(.invalidName, "\(what) is \(utf8.count) bytes (limit \(limit))")
            }
            guard !utf8.contains(0) else { throw EventStoreError(.invalidName, "\(what) holds a NUL character") }
        }
    }

    static func fields(_ fields: [String: Value], operation: EventOperation, updates: Int = 0) throws {
        switch operation {
        case .delete:
            guard fields.isEmpty else { throw EventStoreError(.invalidEvent, "a delete carries no fields") }
        case .patch:
            guard !fields.isEmpty || updates > 0 else {
                throw EventStoreError(.invalidEvent, "a patch names no fields")
            }
        case .put:
            break
        }
        for (name, value) in fields {
            try fieldName(name)
            try element(value, of: name)
        }
    }

    static func fieldName(_ name: String) throws {
        try text(name, named: "field name", limit: maxFieldNameBytes)
    }

    /// Checks a value written to field `name` (a field's value, or an element of a set).
    static func element(_ value: Value, of name: String) throws {
        guard value.isFinite else {
            throw EventStoreError(.invalidEvent, "field \(name.debugDescription) holds a non-finite number")
        }
        guard depth(of: value) <= maxValueDepth else {
            throw EventStoreError(
                .invalidEvent, "field \(name.debugDescription) is nested deeper than \(maxValueDepth)")
        }
    }

    /// Checks an event's updates of add-wins sets and counters: each is an increment, or adds
    /// and removes distinct elements (none both), each removal naming the additions it saw in
    /// ascending order; no field is both written and updated.
    static func updates(_ updates: [String: FieldUpdate], fields: [String: Value]) throws {
        for (name, update) in updates {
            let invalid = try mergedField(
                name, as: "update", fields: fields, increments: update.increment != nil,
                changesSet: !update.add.isEmpty || !update.remove.isEmpty)
            if update.increment != nil { continue }
            // An update that adds and removes nothing records that the field was written (a
            // list written again as it was).
            let added = Set(update.add)
            guard added.count == update.add.count else { throw invalid("adds an element twice") }
            var removed = Set<Value>()
            for element in update.add { try self.element(element, of: name) }
            for removal in update.remove {
                try element(removal.element, of: name)
                guard removed.insert(removal.element).inserted else { throw invalid("removes an element twice") }
                guard !added.contains(removal.element) else { throw invalid("adds and removes the same element") }
                guard !removal.seen.isEmpty, removal.seen.count <= FieldUpdate.maxSeen else {
                    throw invalid("names 1 to \(FieldUpdate.maxSeen) seen additions per removed element")
                }
                guard zip(removal.seen, removal.seen.dropFirst()).allSatisfy({ $0 < $1 }),
                    removal.seen.allSatisfy({ $0.sequence > 0 })
                else { throw invalid("names seen additions that are not distinct event ids in ascending order") }
            }
        }
    }

    /// The checks an update and an edit of field `name` share: a valid name, no value for the
    /// same field, and an increment alone or a change of a set. Returns how to word an error.
    private static func mergedField(
        _ name: String, as noun: String, fields: [String: Value], increments: Bool, changesSet: Bool
    ) throws -> (String) -> EventStoreError {
        try fieldName(name)
        let invalid = { (message: String) in
            EventStoreError(.invalidEvent, "the \(noun) of field \(name.debugDescription) \(message)")
        }
        guard fields[name] == nil else { throw invalid("comes with a value for the same field") }
        guard !(increments && changesSet) else { throw invalid("both increments a counter and changes a set") }
        return invalid
    }

    /// Checks a change's edits of add-wins sets and counters (see ``FieldEdit``).
    static func edits(_ edits: [String: FieldEdit], fields: [String: Value]) throws {
        for (name, edit) in edits {
            let invalid = try mergedField(
                name, as: "edit", fields: fields, increments: edit.increment != nil,
                changesSet: !edit.add.isEmpty || !edit.remove.isEmpty)
            if edit.increment != nil { continue }
            guard !edit.add.isEmpty || !edit.remove.isEmpty else { throw invalid("changes nothing") }
            for element in edit.add + edit.remove { try self.element(element, of: name) }
            guard Set(edit.add).isDisjoint(with: edit.remove) else {
                throw invalid("adds and removes the same element")
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
        guard change.operation != .delete || change.edits.isEmpty else {
            throw EventStoreError(.invalidEvent, "a delete carries no edits")
        }
        try fields(change.fields, operation: change.operation, updates: change.edits.count)
        try edits(change.edits, fields: change.fields)
    }

    /// Checks a received event; returns its encoding (see ``CheckedEvent``).
    static func event(_ event: Event, limit: Int) throws -> [UInt8] {
        try collection(event.collection)
        try item(event.item)
        try fields(event.fields, operation: event.operation, updates: event.updates.count)
        try updates(event.updates, fields: event.fields)
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

    /// Checks the encoded size of the event a change would become. Its id, stamps, seq and (when
    /// the change leaves it to the store) schema version get their widest encodings, so a change without edits of sets and counters that passes here
    /// fits when it is stamped (the updates those become are checked when they are made).
    static func size(of change: Change, limit: Int) throws {
        let widest = HLCTimestamp(rawValue: .max)
        let event = Event(
            seq: .max, id: EventID(origin: ReplicaID(high: .max, low: .max), sequence: .max), hlc: widest, base: widest,
            collection: change.collection, item: change.item, operation: change.operation, fields: change.fields,
            schema: change.schema ?? .max)
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
