/// The canonical JSON form of ``Event`` and ``Value``: what sync, export and import exchange.
///
/// An event is one JSON object with its keys in byte order:
///
/// ```json
/// {"base":"0","collection":"notes","fields":{"rank":3,"title":"Groceries"},
///  "hlc":"117964800000000000","id":{"origin":"3f2a…(32 hex)","seq":7},"item":"n1","op":"put",
///  "schema":0,"seq":42}
/// ```
///
/// - `hlc` and `base` are decimal **strings** (64-bit values are not safe as JavaScript numbers);
///   decoding also accepts a non-negative integer, and a missing `base` as zero.
/// - `id.origin` is the 32-hex-digit ``ReplicaID``; `id.seq` the origin sequence.
/// - `op` is `put`, `patch` or `delete`; `fields` is omitted by nobody and may be `{}`.
/// - `seq` is the event's position in the log it was read from (`0` when it has none).
/// - `updates`, only when the event has any, holds its changes to add-wins sets and counters
///   (see `FieldUpdate+JSON`).
/// - No other key is accepted: decoding refuses an unknown (say, misspelt) key, in the event and
///   in its `id`, rather than drop it.
///
/// Values keep their kind: an integer is written without a fraction (`3`), a double always with
/// a fraction or an exponent (`3.0`, `1e+20`), so decoding gives back ``Value/int(_:)`` or
/// ``Value/double(_:)`` exactly. Strings are UTF-8 with only `"`, `\` and control characters
/// escaped. The encoding is deterministic: equal events give equal bytes.
///
/// ```swift
/// let bytes = event.jsonBytes()
/// let again = try Event(json: bytes)
/// assert(again == event)
/// ```
extension Event {
    /// The event's canonical JSON (see the extension's overview).
    public func jsonBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + fields.count * 24)
        writeJSON(into: &bytes)
        return bytes
    }

    /// Appends the event's canonical JSON to `bytes`.
    public func writeJSON(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"base":""#.utf8)
        bytes.append(contentsOf: String(base.rawValue).utf8)
        bytes.append(contentsOf: #"","collection":"#.utf8)
        JSONWriter.string(collection, into: &bytes)
        bytes.append(contentsOf: #","fields":"#.utf8)
        JSONWriter.object(fields, into: &bytes)
        bytes.append(contentsOf: #","hlc":""#.utf8)
        bytes.append(contentsOf: String(hlc.rawValue).utf8)
        bytes.append(contentsOf: #"","id":{"origin":""#.utf8)
        bytes.append(contentsOf: id.origin.description.utf8)
        bytes.append(contentsOf: #"","seq":"#.utf8)
        bytes.append(contentsOf: String(id.sequence).utf8)
        bytes.append(contentsOf: #"},"item":"#.utf8)
        JSONWriter.string(item, into: &bytes)
        bytes.append(contentsOf: #","op":""#.utf8)
        bytes.append(contentsOf: operation.description.utf8)
        bytes.append(contentsOf: #"","schema":"#.utf8)
        bytes.append(contentsOf: String(schema).utf8)
        bytes.append(contentsOf: #","seq":"#.utf8)
        bytes.append(contentsOf: String(seq).utf8)
        if !updates.isEmpty {
            bytes.append(contentsOf: #","updates":"#.utf8)
            JSONWriter.value(updatesJSONValue, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Decodes an event from its JSON form.
    ///
    /// - Parameters:
    ///   - json: One JSON object (surrounding whitespace allowed).
    ///   - maxDepth: The deepest nesting of arrays and objects accepted inside a field value.
    /// - Throws: ``JSONSyntaxError`` for malformed JSON (or nesting deeper than `maxDepth`, or an
    ///   integer beyond 64 bits), ``EventStoreError/Code/invalidEvent`` for JSON that is not an
    ///   event (a member missing, of the wrong kind, or unknown).
    public init(json: [UInt8], maxDepth: Int = JSONSyntaxError.defaultMaxDepth) throws {
        // The event object and its `fields` object add two levels around field values.
        let value = try Value(json: json, maxDepth: maxDepth + 2)
        try self.init(jsonValue: value)
    }

    /// Decodes an event from a parsed JSON object (see ``Value/init(json:maxDepth:)``).
    ///
    /// - Throws: ``EventStoreError/Code/invalidEvent`` naming the member that is missing, wrong or
    ///   unknown.
    public init(jsonValue: Value) throws {
        guard case .object(let object) = jsonValue else { throw Event.shapeError("an event must be a JSON object") }
        // Each member is looked up once; when fewer are present than the object holds, it has
        // another key. (Cheaper than checking every key against the list: this runs per pushed event.)
        let id = object["id"], op = object["op"], hlc = object["hlc"], base = object["base"]
        let collection = object["collection"], item = object["item"], fields = object["fields"]
        let schema = object["schema"], seq = object["seq"], updates = object["updates"]
        func one(_ value: Value?) -> Int { value == nil ? 0 : 1 }
        let present =
            one(id) + one(op) + one(hlc) + one(base) + one(collection) + one(item) + one(fields) + one(schema)
            + one(seq) + one(updates)
        if present != object.count { try Event.refuseUnknownKeys(object, known: Event.jsonKeys, in: "") }

        func string(_ value: Value?, _ name: String) throws -> String {
            switch value {
            case .string(let text)?: return text
            case nil: throw Event.shapeError("\"\(name)\" is missing")
            default: throw Event.shapeError("\"\(name)\" must be a string")
            }
        }
        func stamp(_ value: Value?, _ name: String) throws -> HLCTimestamp {
            switch value {
            case nil where name == "base": return .zero
            case .string(let text)?:
                guard let raw = UInt64(text) else {
                    throw Event.shapeError("\"\(name)\" must be a decimal string of a 64-bit unsigned integer")
                }
                return HLCTimestamp(rawValue: raw)
            case .int(let number)? where number >= 0:
                return HLCTimestamp(rawValue: UInt64(number))
            case nil: throw Event.shapeError("\"\(name)\" is missing")
            default: throw Event.shapeError("\"\(name)\" must be a decimal string")
            }
        }
        func unsigned(_ value: Value?, _ name: String, default fallback: UInt64? = nil) throws -> UInt64 {
            switch value {
            case .int(let number)? where number >= 0: return UInt64(number)
            case nil:
                if let fallback { return fallback }
                throw Event.shapeError("\"\(name)\" is missing")
            default: throw Event.shapeError("\"\(name)\" must be a non-negative integer")
            }
        }

        guard let id else { throw Event.shapeError("\"id\" is missing") }
        guard case .object(let idObject) = id else {
            throw Event.shapeError("\"id\" must be an object {\"origin\", \"seq\"}")
        }
        let originValue = idObject["origin"], sequenceValue = idObject["seq"]
        if idObject.count != one(originValue) + one(sequenceValue) {
            try Event.refuseUnknownKeys(idObject, known: Event.idKeys, in: "id.")
        }
        guard case .string(let originHex)? = originValue, let origin = ReplicaID(hex: originHex.lowercased())
        else { throw Event.shapeError("\"id.origin\" must be 32 hex digits") }
        let sequence = try unsigned(sequenceValue, "id.seq")
        let opName = try string(op, "op")
        guard let operation = EventOperation(name: opName) else {
            throw Event.shapeError("\"op\" must be \"put\", \"patch\" or \"delete\", not \(opName.debugDescription)")
        }
        let members: [String: Value]
        switch fields {
        case .object(let object)?: members = object
        case nil, .null?: members = [:]
        default: throw Event.shapeError("\"fields\" must be an object")
        }
        let schemaVersion = try unsigned(schema, "schema", default: 0)
        guard schemaVersion <= UInt64(UInt16.max) else { throw Event.shapeError("\"schema\" must be at most 65535") }
        self.init(
            seq: try unsigned(seq, "seq", default: 0), id: EventID(origin: origin, sequence: sequence),
            hlc: try stamp(hlc, "hlc"), base: try stamp(base, "base"), collection: try string(collection, "collection"),
            item: try string(item, "item"), operation: operation, fields: members, schema: UInt16(schemaVersion),
            updates: try Event.updates(jsonValue: updates))
    }

    private static func shapeError(_ message: String) -> EventStoreError {
        EventStoreError(.invalidEvent, "not an event: \(message)")
    }

    /// The members of an event's JSON object, and of its `id`.
    static let jsonKeys = ["base", "collection", "fields", "hlc", "id", "item", "op", "schema", "seq", "updates"]
    static let idKeys = ["origin", "seq"]

    /// Throws for the first key (in byte order) of `object` that is not in `known`: a misspelt
    /// key is an error, never silently dropped.
    private static func refuseUnknownKeys(_ object: [String: Value], known: [String], in prefix: String) throws {
        if let unknown = object.keys.filter({ !known.contains($0) }).min(by: utf8Less) {
            throw shapeError(
                "unknown key \((prefix + unknown).debugDescription) (an event\(prefix.isEmpty ? "" : " id") has "
                    + "\(known.joined(separator: ", ")))")
        }
    }
}

/// `Event` in the same form through `Encoder`/`Decoder` (for `JSONEncoder`, property lists…).
///
/// The stamps are decimal strings, as in ``Event/jsonBytes()``. Prefer ``Event/jsonBytes()`` and
/// ``Event/init(json:maxDepth:)`` for the exact canonical bytes: a generic encoder may write a
/// whole double such as `2.0` as `2`, which decodes as an integer.
extension Event: Codable {
    private enum CodingKeys: String, CodingKey {
        case seq, id, hlc, base, collection, item, op, fields, schema, updates
    }

    private enum IDKeys: String, CodingKey {
        case origin, seq
    }

    /// Decodes an event.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let idContainer = try container.nestedContainer(keyedBy: IDKeys.self, forKey: .id)
        let originHex = try idContainer.decode(String.self, forKey: .origin)
        guard let origin = ReplicaID(hex: originHex.lowercased()) else {
            throw DecodingError.dataCorruptedError(
                forKey: .origin, in: idContainer, debugDescription: "expected 32 hex digits")
        }
        func stamp(_ key: CodingKeys) throws -> HLCTimestamp {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return .zero }
            guard let raw = UInt64(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "expected a decimal string")
            }
            return HLCTimestamp(rawValue: raw)
        }
        let opName = try container.decode(String.self, forKey: .op)
        guard let operation = EventOperation(name: opName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .op, in: container, debugDescription: "expected put, patch or delete")
        }
        self.init(
            seq: try container.decodeIfPresent(UInt64.self, forKey: .seq) ?? 0,
            id: EventID(origin: origin, sequence: try idContainer.decode(UInt64.self, forKey: .seq)),
            hlc: try stamp(.hlc), base: try stamp(.base),
            collection: try container.decode(String.self, forKey: .collection),
            item: try container.decode(String.self, forKey: .item), operation: operation,
            fields: try container.decodeIfPresent([String: Value].self, forKey: .fields) ?? [:],
            schema: try container.decodeIfPresent(UInt16.self, forKey: .schema) ?? 0,
            updates: try Event.updates(jsonValue: try container.decodeIfPresent(Value.self, forKey: .updates)))
    }

    /// Encodes the event.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(String(base.rawValue), forKey: .base)
        try container.encode(collection, forKey: .collection)
        try container.encode(fields, forKey: .fields)
        try container.encode(String(hlc.rawValue), forKey: .hlc)
        var idContainer = container.nestedContainer(keyedBy: IDKeys.self, forKey: .id)
        try idContainer.encode(id.origin.description, forKey: .origin)
        try idContainer.encode(id.sequence, forKey: .seq)
        try container.encode(item, forKey: .item)
        try container.encode(operation.description, forKey: .op)
        try container.encode(schema, forKey: .schema)
        try container.encode(seq, forKey: .seq)
        if !updates.isEmpty { try container.encode(updatesJSONValue, forKey: .updates) }
    }
}

extension Value {
    /// The value's canonical JSON (see ``Event/jsonBytes()`` for the rules).
    ///
    /// ```swift
    /// Value.object(["a": 1, "b": 1.0]).jsonBytes()   // {"a":1,"b":1.0}
    /// ```
    public func jsonBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        writeJSON(into: &bytes)
        return bytes
    }

    /// Appends the value's canonical JSON to `bytes`. A non-finite double is written as `null`.
    public func writeJSON(into bytes: inout [UInt8]) {
        JSONWriter.value(self, into: &bytes)
    }

    /// Parses one JSON document strictly (RFC 8259): no trailing commas, comments, duplicate
    /// object keys, invalid UTF-8 or lone surrogates.
    ///
    /// Numbers written without a fraction or an exponent become ``Value/int(_:)`` and must fit a
    /// signed 64-bit integer (a larger one is an error, not silently a double); numbers with a
    /// fraction or an exponent become ``Value/double(_:)``. An error names where the problem is
    /// (``JSONSyntaxError/path``, such as `fields.count`).
    ///
    /// - Parameters:
    ///   - json: The document's bytes.
    ///   - maxDepth: The deepest nesting of arrays and objects accepted (a guard against stack
    ///     exhaustion by hostile input).
    /// - Throws: ``JSONSyntaxError`` with the byte offset of the problem.
    public init(json: [UInt8], maxDepth: Int = JSONSyntaxError.defaultMaxDepth) throws {
        self = try json.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer, maxDepth: maxDepth)
            reader.skipWhitespace()
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.error("unexpected data after the JSON value") }
            return value
        }
    }
}
