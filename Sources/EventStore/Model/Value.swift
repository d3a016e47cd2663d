/// A JSON-like field value: what an item's fields hold.
///
/// ```swift
/// let fields: [String: Value] = ["title": "Groceries", "done": false, "tags": ["home"], "rank": 3]
/// ```
///
/// Doubles must be finite (JSON has no NaN or infinity); ``EventStoreError/invalidEvent`` is thrown
/// otherwise when the value is written.
public enum Value: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer.
    case int(Int64)
    /// A finite double.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered list of values.
    case array([Value])
    /// A map from string keys to values.
    case object([String: Value])

    /// The string, when the value is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when the value is an integer.
    public var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The number as a double, when the value is an integer or a double.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// The boolean, when the value is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when the value is an array.
    public var arrayValue: [Value]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when the value is an object.
    public var objectValue: [String: Value]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }

    /// The name of the value's kind, as used in error messages: `null`, `bool`, `int`, `double`,
    /// `string`, `array` or `object`.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// About how many bytes the value takes encoded (exact for scalars and strings).
    var estimatedBytes: Int {
        switch self {
        case .null, .bool: 1
        case .int: 10
        case .double: 9
        case .string(let string): 5 + string.utf8.count
        case .array(let values): 5 + values.reduce(0) { $0 + $1.estimatedBytes }
        case .object(let members): 5 + members.reduce(0) { $0 + 5 + $1.key.utf8.count + $1.value.estimatedBytes }
        }
    }

    /// Whether every double inside the value is finite.
    var isFinite: Bool {
        switch self {
        case .double(let value): value.isFinite
        case .array(let values): values.allSatisfy(\.isFinite)
        case .object(let members): members.values.allSatisfy(\.isFinite)
        default: true
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByStringInterpolation, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` is `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal.
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    /// A dictionary literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
