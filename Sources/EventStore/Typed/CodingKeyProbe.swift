import Foundation

/// The fields a model's properties are stored under, found by decoding one model from made-up
/// values: its `init(from:)` asks for its coding keys, each answered with a value no other key
/// gets, and the decoded model's properties (read with `Mirror`) show which key each came from.
///
/// A key path names a property (`\Task.dueDate`), but an item stores the property under its
/// coding key (`due_date` with `case dueDate = "due_date"`). Without this, a query, a sort or a
/// patch by key path would use the property's name, which names no field of the item.
///
/// A property is mapped when it holds a text, a number, a `Bool`, a `Date`, a `UUID`, a `URL` or
/// `Data` (the values the probe can tell apart), or when its name is one of the keys. The probe fails, and nothing is known, when
/// the model's decoding refuses the made-up values (an enum property that is not `CaseIterable`,
/// a custom `init(from:)` that validates).
struct CodingKeyProbe: Sendable {
    /// Every top-level coding key the model's decoding asked for.
    let keys: Set<String>
    /// The coding key of each property whose value came from one, by property name.
    let fields: [String: String]

    /// The coding key `property` is stored under: the one its value came from, or its own name
    /// when that is a key no other property's value came from. `nil` otherwise: the model does
    /// not decode the property, or decodes it under a key the probe could not match (a renamed
    /// property of a type whose values it cannot tell apart: an array, a nested type, an enum).
    func field(of property: String) -> String? {
        if let field = fields[property] { return field }
        guard keys.contains(property), !fields.values.contains(property) else { return nil }
        return property
    }

    /// Probes `Model`; `nil` when its decoding refused the made-up values.
    ///
    /// A `Bool` has no value of its own to give: the model is decoded once more for each key
    /// read as a `Bool`, that key alone reading `true`, and the property that holds `true` is
    /// the key's.
    static func probe<Model: Decodable>(_ model: Model.Type) -> CodingKeyProbe? {
        let state = ProbeState(trueBool: nil)
        guard let decoded = try? Model(from: ProbeDecoder(state: state, depth: 0)) else { return nil }
        // A property wrapper's storage is labelled `_name`; its key path names `name`.
        func property(_ label: String) -> String {
            label.hasPrefix("_") && !state.keys.contains(label) ? String(label.dropFirst()) : label
        }
        var fields: [String: String] = [:]
        var properties: [String] = []
        for child in Mirror(reflecting: decoded).children {
            guard let label = child.label else { continue }
            properties.append(property(label))
            if let token = ProbeState.token(of: child.value), let key = state.keyOfToken[token] {
                fields[property(label)] = key
            }
        }
        for (index, key) in state.boolKeys.enumerated() {
            guard let flipped = try? Model(from: ProbeDecoder(state: ProbeState(trueBool: index), depth: 0)) else {
                return nil
            }
            let holders = Mirror(reflecting: flipped).children.filter { ($0.value as? Bool) == true }
            if holders.count == 1, let label = holders[0].label { fields[property(label)] = key }
        }
        return CodingKeyProbe(keys: state.keys, fields: fields)
    }
}

/// What a probe has handed out: the top-level keys asked for and the value each one got.
private final class ProbeState {
    var keys: Set<String> = []
    var keyOfToken: [Token: String] = [:]
    /// The top-level keys read as a `Bool`, in the order they were read.
    var boolKeys: [String] = []
    /// Which of those reads `true` (the others read `false`).
    let trueBool: Int?
    private var counter = 0

    init(trueBool: Int?) {
        self.trueBool = trueBool
    }

    /// The value of a top-level `Bool` read under `key`.
    func bool(_ key: String) -> Bool {
        defer { boolKeys.append(key) }
        return boolKeys.count == trueBool
    }

    /// A value one key got, in a form a property's value can be compared with.
    enum Token: Hashable {
        case text(String)
        case number(Double)
    }

    /// The next value: small enough for every integer type, and never the same twice.
    func next() -> Int {
        counter += 1
        return counter
    }

    func record(_ key: String, _ token: Token?, depth: Int) {
        guard depth == 0 else { return }
        keys.insert(key)
        if let token { keyOfToken[token] = key }
    }

    static func token(of value: Any) -> Token? {
        switch value {
        case let text as String: .text(text)
        case let uuid as UUID: .text(uuid.uuidString)
        case let url as URL: .text(url.absoluteString)
        case let data as Data: .text("data:" + String(decoding: data, as: UTF8.self))
        case let date as Date: .number(date.timeIntervalSinceReferenceDate)
        case let number as Double: .number(number)
        case let number as Float: .number(Double(number))
        case let number as any BinaryInteger: Double(exactly: number).map(Token.number)
        default: nil
        }
    }
}

/// A decoder that answers every request with a made-up value (see ``CodingKeyProbe``).
private struct ProbeDecoder: Decoder {
    let state: ProbeState
    let depth: Int
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyedContainer<Key>(state: state, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ProbeUnkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingleValueContainer(state: state, depth: depth)
    }

    /// How deep the probe goes into nested types before it gives up (a type that holds itself
    /// in a way the probe cannot leave empty).
    static let maxDepth = 16

    /// A made-up `T`, and the token to compare the property's value with.
    static func make<T: Decodable>(_ type: T.Type, state: ProbeState, depth: Int) throws -> (T, ProbeState.Token?) {
        guard depth < maxDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "probed too deep"))
        }
        let number = state.next()
        switch type {
        case is String.Type: return ("\u{1}probe\(number)" as! T, .text("\u{1}probe\(number)"))
        case is Date.Type:
            return (Date(timeIntervalSinceReferenceDate: Double(number) + 0.5) as! T, .number(Double(number) + 0.5))
        case is Double.Type: return (Double(number) + 0.5 as! T, .number(Double(number) + 0.5))
        case is Float.Type: return (Float(number) + 0.5 as! T, .number(Double(number) + 0.5))
        case is Bool.Type: return (false as! T, nil)
        case let integer as any FixedWidthInteger.Type:
            return (integer.init(truncatingIfNeeded: number) as! T, .number(Double(number)))
        case is Data.Type: return (Data("probe\(number)".utf8) as! T, .text("data:probe\(number)"))
        case is UUID.Type:
            let uuid = UUID(uuidString: "00000000-0000-4000-8000-" + String(format: "%012x", number))!
            return (uuid as! T, .text(uuid.uuidString))
        case is URL.Type: return (URL(string: "probe:\(number)")! as! T, .text("probe:\(number)"))
        case is Decimal.Type: return (Decimal(number) as! T, nil)
        default: break
        }
        if let cases = type as? any CaseIterable.Type, let first = firstCase(of: cases) as? T { return (first, nil) }
        return (try T(from: ProbeDecoder(state: state, depth: depth + 1)), nil)
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { type.allCases.first }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: ProbeState
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    /// A nested object has none of its optional members, so that a type that holds an optional
    /// of itself (a comment's parent comment) is not probed for ever.
    func contains(_ key: Key) -> Bool {
        state.record(key.stringValue, nil, depth: depth)
        return depth == 0
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        state.record(key.stringValue, nil, depth: depth)
        return depth > 0
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if depth == 0, T.self == Bool.self {
            state.record(key.stringValue, nil, depth: depth)
            return state.bool(key.stringValue) as! T
        }
        let (value, token) = try ProbeDecoder.make(type, state: state, depth: depth)
        state.record(key.stringValue, token, depth: depth)
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        state.record(key.stringValue, nil, depth: depth)
        return KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(state: state, depth: depth + 1))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        state.record(key.stringValue, nil, depth: depth)
        return ProbeUnkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ProbeDecoder(state: state, depth: depth + 1) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        state.record(key.stringValue, nil, depth: depth)
        return ProbeDecoder(state: state, depth: depth + 1)
    }
}

/// An empty array.
private struct ProbeUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    private func end() -> DecodingError {
        DecodingError.valueNotFound(Any.self, DecodingError.Context(codingPath: [], debugDescription: "probe"))
    }

    mutating func decodeNil() throws -> Bool { true }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    { throw end() }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
    mutating func superDecoder() throws -> any Decoder { throw end() }
}

private struct ProbeSingleValueContainer: SingleValueDecodingContainer {
    let state: ProbeState
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { depth > 0 }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ProbeDecoder.make(type, state: state, depth: depth + 1).0
    }
}
