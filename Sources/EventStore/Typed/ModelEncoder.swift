import Foundation

/// Encodes `Encodable` models straight to field values, without a JSON round trip.
///
/// It gives exactly the values that `JSONEncoder` (default strategies) then `Value`'s JSON
/// decoding give, so a model is stored the same whichever way it is encoded:
/// - a number that is an integer and fits in 64 bits is ``Value/int(_:)`` (`3.0` is `3`, `-0.0`
///   is `0`), any other number ``Value/double(_:)``; a `Float` is the double its shortest text
///   names (`0.1` is `0.1`), a `Decimal` the number its text names (refused when that number does
///   not read back as the same `Decimal`: more digits than a double keeps, or not a number);
/// - `Date` as seconds since 2001 (its own `Codable` form), `Data` as base64 text, `URL` as its
///   text;
/// - a `nil` optional property is left out, as `JSONEncoder` leaves it out;
/// - a number that is not finite is an `EncodingError.invalidValue`.
enum ModelEncoder {
    /// Encodes `value`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a number that is not finite, or for a value
    ///   that encodes nothing at all (as `JSONEncoder` does).
    static func encode<T: Encodable>(_ value: T) throws -> Value {
        try encode(value, at: [], topLevel: true)
    }

    /// Encodes `value`, found at `path` (made only when needed: a nested encoder or an error).
    /// A nested value that encodes nothing is an empty object; a top-level one is refused.
    private static func encode<T: Encodable>(
        _ value: T, at path: @autoclosure () -> [any CodingKey], topLevel: Bool = false
    ) throws -> Value {
        if let scalar = try scalar(value, at: path()) { return scalar }
        let path = path()
        let node = Node()
        try value.encode(to: Encoding(node: node, codingPath: path))
        if topLevel && node.isEmpty {
            throw EncodingError.invalidValue(
                value, .init(codingPath: path, debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return try node.value(at: path)
    }

    /// The value of the types JSON writes in a form of its own, and of the exact ones (told by
    /// their type, not by a dynamic cast of the value).
    private static func scalar<T: Encodable>(_ value: T, at path: @autoclosure () -> [any CodingKey]) throws
        -> Value?
    {
        if T.self == String.self { return .string(value as! String) }
        if T.self == Int64.self { return .int(value as! Int64) }
        if T.self == Int.self { return .int(Int64(value as! Int)) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == Double.self { return try number(value as! Double, at: path()) }
        if T.self == Value.self { return try normalized(value as! Value, at: path()) }
        if T.self == Date.self { return try number((value as! Date).timeIntervalSinceReferenceDate, at: path()) }
        if T.self == Float.self { return try number(value as! Float, at: path()) }
        if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
        if T.self == URL.self { return .string((value as! URL).absoluteString) }
        if T.self == Decimal.self { return try decimal(value as! Decimal, at: path()) }
        return nil
    }

    // MARK: Numbers

    /// A `Decimal` as the number its text names, when that number reads back as the same
    /// `Decimal`: one with more significant digits than a 64-bit integer or a double keeps (about
    /// 17), or not a number, is refused rather than rounded.
    static func decimal(_ decimal: Decimal, at path: @autoclosure () -> [any CodingKey]) throws -> Value {
        let stored = text(decimal.description)
        guard ModelDecoder.decimal(stored) == decimal else {
            throw EncodingError.invalidValue(
                decimal,
                .init(
                    codingPath: path(),
                    debugDescription: "the Decimal \(decimal) does not fit a stored number (a 64-bit integer or a "
                        + "double, about 17 significant digits) without rounding: store it as text"))
        }
        return stored
    }

    /// A double as its JSON text reads back: an integer when it is one that fits in 64 bits.
    static func number(_ double: Double, at path: @autoclosure () -> [any CodingKey]) throws -> Value {
        guard double.isFinite else {
            throw EncodingError.invalidValue(
                double,
                .init(codingPath: path(), debugDescription: "Unable to encode Double.\(double) directly in JSON.")
            )
        }
        return Int64(exactly: double).map(Value.int) ?? .double(double)
    }

    static func number(_ float: Float, at path: @autoclosure () -> [any CodingKey]) throws -> Value {
        guard float.isFinite else {
            throw EncodingError.invalidValue(
                float, .init(codingPath: path(), debugDescription: "Unable to encode Float.\(float) directly in JSON."))
        }
        return text("\(float)")
    }

    /// An integer as a stored number: every value of 64-bit signed range. A larger unsigned one
    /// (`UInt64` past `Int64.max`) is refused rather than rounded to a double: store it as a
    /// string.
    static func number<T: FixedWidthInteger>(_ integer: T, at path: @autoclosure () -> [any CodingKey]) throws -> Value
    {
        guard let exact = Int64(exactly: integer) else {
            throw EncodingError.invalidValue(
                integer,
                .init(
                    codingPath: path(),
                    debugDescription: "\(integer) does not fit a 64-bit signed integer, which is how numbers are "
                        + "stored: store it as a string"))
        }
        return .int(exact)
    }

    /// The value of a number's JSON text.
    private static func text(_ text: String) -> Value {
        if let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text) else { return .string(text) }
        return Int64(exactly: double).map(Value.int) ?? .double(double)
    }

    /// A `Value` as its JSON form reads back (its numbers as above).
    private static func normalized(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> Value {
        switch value {
        case .double(let double): return try number(double, at: path())
        case .array(let elements): return .array(try elements.map { try normalized($0, at: path()) })
        case .object(let members): return .object(try members.mapValues { try normalized($0, at: path()) })
        default: return value
        }
    }

    // MARK: Tree

    /// A value being encoded: containers write into it, and it becomes a ``Value`` at the end.
    ///
    /// Scalars and values encoded whole are stored as values at once; only a nested container,
    /// which its caller fills later, is kept as a node until the end.
    private final class Node {
        var value: Value?
        var members: [String: Value]?
        var pendingMembers: [String: Node] = [:]
        var elements: [Value]?
        var pendingElements: [Int: Node] = [:]

        init(_ value: Value? = nil) { self.value = value }

        func value(at path: [any CodingKey]) throws -> Value {
            if var members {
                for (key, node) in pendingMembers { members[key] = try node.value(at: path) }
                return .object(members)
            }
            if var elements {
                for (index, node) in pendingElements { elements[index] = try node.value(at: path) }
                return .array(elements)
            }
            // A nested value that encodes nothing is an empty object, as in JSON.
            return value ?? .object([:])
        }

        /// Whether no container and no value was asked of the node.
        var isEmpty: Bool { members == nil && elements == nil && value == nil }

        func object() -> Node {
            if members == nil { (members, elements, value) = ([:], nil, nil) }
            return self
        }

        func array() -> Node {
            if elements == nil { (elements, members, value) = ([], nil, nil) }
            return self
        }

        func set(_ key: String, _ value: Value) {
            members![key] = value
            if !pendingMembers.isEmpty { pendingMembers[key] = nil }
        }

        /// A node for member `key`, which a nested container fills.
        func child(_ key: String) -> Node {
            let child = Node()
            members![key] = .null
            pendingMembers[key] = child
            return child
        }

        /// A node for the next element, which a nested container fills.
        func nextChild() -> Node {
            let child = Node()
            pendingElements[elements!.count] = child
            elements!.append(.null)
            return child
        }
    }

    /// The `Encoder` a model's `encode(to:)` receives, and its single value container.
    private struct Encoding: Encoder, SingleValueEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(node: node.object(), codingPath: codingPath))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            Unkeyed(node: node.array(), codingPath: codingPath)
        }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws { node.value = .null }
        func encode(_ value: Bool) throws { node.value = .bool(value) }
        func encode(_ value: String) throws { node.value = .string(value) }
        func encode(_ value: Double) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: Float) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: Int) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: Int8) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: Int16) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: Int32) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: Int64) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: UInt) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: UInt8) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: UInt16) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: UInt32) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode(_ value: UInt64) throws { node.value = try ModelEncoder.number(value, at: codingPath) }
        func encode<T: Encodable>(_ value: T) throws { node.value = try ModelEncoder.encode(value, at: codingPath) }
    }

    /// An object's members, by coding key.
    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]

        private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

        /// A single value container for a nested container of member `key`.
        private func nested(_ key: Key) -> Encoding {
            Encoding(node: node.child(key.stringValue), codingPath: path(key))
        }

        mutating func encodeNil(forKey key: Key) throws { node.set(key.stringValue, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { node.set(key.stringValue, .bool(value)) }
        mutating func encode(_ value: String, forKey key: Key) throws { node.set(key.stringValue, .string(value)) }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            node.set(key.stringValue, try ModelEncoder.number(value, at: path(key)))
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            node.set(key.stringValue, try ModelEncoder.number(value, at: path(key)))
        }
        private func integer<T: FixedWidthInteger>(_ value: T, _ key: Key) throws {
            node.set(key.stringValue, try ModelEncoder.number(value, at: path(key)))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.set(key.stringValue, try ModelEncoder.encode(value, at: path(key)))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            nested(key).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            nested(key).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            Encoding(node: node.child("super"), codingPath: codingPath + [AnyCodingKey("super")])
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder { nested(key) }
    }

    /// An array's elements, in order.
    private struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        var count: Int { node.elements!.count }

        private var path: [any CodingKey] { codingPath + [ElementKey(index: node.elements!.count)] }

        private func append(_ value: Value) { node.elements!.append(value) }

        /// A single value container for a nested container as the next element.
        private func nested() -> Encoding {
            let path = self.path
            return Encoding(node: node.nextChild(), codingPath: path)
        }

        mutating func encodeNil() throws { append(.null) }
        mutating func encode(_ value: Bool) throws { append(.bool(value)) }
        mutating func encode(_ value: String) throws { append(.string(value)) }
        mutating func encode(_ value: Double) throws { append(try ModelEncoder.number(value, at: path)) }
        mutating func encode(_ value: Float) throws { append(try ModelEncoder.number(value, at: path)) }
        mutating func encode(_ value: Int) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: Int8) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: Int16) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: Int32) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: Int64) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: UInt) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: UInt8) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: UInt16) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: UInt32) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: UInt64) throws { append(try ModelEncoder.number(value, at: codingPath)) }
        mutating func encode<T: Encodable>(_ value: T) throws { append(try ModelEncoder.encode(value, at: path)) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            nested().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { nested().unkeyedContainer() }
        mutating func superEncoder() -> any Encoder { nested() }
    }
}
