/// A condition on an item's fields, for ``Query/filter``.
///
/// ```swift
/// let open: Filter = .and([.equal("done", false), .lessOrEqual("due", .double(deadline))])
/// let inbox: Filter = .or([.missing("folder"), .equal("folder", "inbox")])
/// ```
///
/// Values compare by type first, then within the type, in the order of
/// ``IndexDefinition``'s keys: missing < null < false < true < numbers < strings < arrays <
/// objects. Numbers compare by value (`1 == 1.0`); strings by their UTF-8 bytes (no Unicode
/// normalization or case folding); arrays and objects by their binary encoding (use them with
/// `==`, `!=` and `in` only). A range comparison (`<`, `<=`, `>`, `>=`, ``between(_:_:_:)``)
/// matches only values of the bound's type: `.less("due", 5)` never matches a string or a
/// missing field. ``notEqual(_:_:)`` matches every other value, missing fields included.
public indirect enum Filter: Sendable, Hashable {
    /// The field holds the value (a number equal in value counts: `1 == 1.0`).
    case equal(String, Value)
    /// The field does not hold the value (missing fields match).
    case notEqual(String, Value)
    /// The field holds a value of the bound's type that is smaller.
    case less(String, Value)
    /// The field holds a value of the bound's type that is smaller or equal.
    case lessOrEqual(String, Value)
    /// The field holds a value of the bound's type that is greater.
    case greater(String, Value)
    /// The field holds a value of the bound's type that is greater or equal.
    case greaterOrEqual(String, Value)
    /// The field holds a value within `lower...upper` (both of the same type).
    case between(String, Value, Value)
    /// The field holds one of the values (`in`).
    case oneOf(String, [Value])
    /// The field holds a string starting with the prefix (by UTF-8 bytes).
    case prefix(String, String)
    /// The field is missing or null.
    case missing(String)
    /// Every filter holds (an empty list: always).
    case and([Filter])
    /// At least one filter holds (an empty list: never).
    case or([Filter])

    /// Whether an item with `fields` satisfies the filter.
    public func matches(_ fields: [String: Value]) -> Bool {
        switch self {
        case .equal(let field, let value): return ValueOrder.equal(fields[field], value)
        case .notEqual(let field, let value): return !ValueOrder.equal(fields[field], value)
        case .less(let field, let bound): return ValueOrder.compareInType(fields[field], bound).map { $0 < 0 } ?? false
        case .lessOrEqual(let field, let bound):
            return ValueOrder.compareInType(fields[field], bound).map { $0 <= 0 } ?? false
        case .greater(let field, let bound):
            return ValueOrder.compareInType(fields[field], bound).map { $0 > 0 } ?? false
        case .greaterOrEqual(let field, let bound):
            return ValueOrder.compareInType(fields[field], bound).map { $0 >= 0 } ?? false
        case .between(let field, let lower, let upper):
            guard let low = ValueOrder.compareInType(fields[field], lower),
                let high = ValueOrder.compareInType(fields[field], upper)
            else { return false }
            return low >= 0 && high <= 0
        case .oneOf(let field, let values): return values.contains { ValueOrder.equal(fields[field], $0) }
        case .prefix(let field, let prefix):
            guard case .string(let string) = fields[field] else { return false }
            return string.utf8.starts(with: prefix.utf8)
        case .missing(let field): return fields[field] == nil || fields[field] == .null
        case .and(let filters): return filters.allSatisfy { $0.matches(fields) }
        case .or(let filters): return filters.contains { $0.matches(fields) }
        }
    }

    /// The field a leaf filter constrains (`nil` for ``and(_:)`` and ``or(_:)``).
    var field: String? {
        switch self {
        case .equal(let field, _), .notEqual(let field, _), .less(let field, _), .lessOrEqual(let field, _),
            .greater(let field, _), .greaterOrEqual(let field, _), .between(let field, _, _), .oneOf(let field, _),
            .prefix(let field, _), .missing(let field):
            return field
        case .and, .or: return nil
        }
    }

    /// The filters that must all hold: the members of nested ``and(_:)``s, or the filter itself.
    var conjuncts: [Filter] {
        if case .and(let filters) = self { return filters.flatMap(\.conjuncts) }
        return [self]
    }

    /// Every field the filter names.
    var fields: Set<String> {
        switch self {
        case .and(let filters), .or(let filters): return filters.reduce(into: []) { $0.formUnion($1.fields) }
        default: return field.map { [$0] } ?? []
        }
    }

    /// Feeds a canonical form of the filter to `hash` (cursors name the query they belong to).
    func fingerprint(into hash: inout FNV1a) {
        hash.combine(bytes: canonicalBytes)
    }

    /// The filter's canonical form: its values as the store encodes them (strings as their UTF-8).
    private var canonicalBytes: [UInt8] {
        var writer = ByteWriter(capacity: 64)
        write(to: &writer)
        return writer.bytes
    }

    /// Whether the two filters are the same to the byte. `==` also equates strings that are
    /// canonically equivalent but spelt with other bytes, which queries tell apart.
    func isIdentical(to other: Filter) -> Bool {
        canonicalBytes == other.canonicalBytes
    }

    private func write(to writer: inout ByteWriter) {
        func leaf(_ tag: UInt8, _ field: String, _ values: [Value]) {
            writer.write(tag)
            writer.write(string: field)
            writer.write(varint: values.count)
            for value in values { writer.write(value) }
        }
        switch self {
        case .equal(let field, let value): leaf(1, field, [value])
        case .notEqual(let field, let value): leaf(2, field, [value])
        case .less(let field, let value): leaf(3, field, [value])
        case .lessOrEqual(let field, let value): leaf(4, field, [value])
        case .greater(let field, let value): leaf(5, field, [value])
        case .greaterOrEqual(let field, let value): leaf(6, field, [value])
        case .between(let field, let lower, let upper): leaf(7, field, [lower, upper])
        case .oneOf(let field, let values): leaf(8, field, values)
        case .prefix(let field, let prefix): leaf(9, field, [.string(prefix)])
        case .missing(let field): leaf(10, field, [])
        case .and(let filters), .or(let filters):
            if case .and = self { writer.write(UInt8(11)) } else { writer.write(UInt8(12)) }
            writer.write(varint: filters.count)
            for filter in filters { filter.write(to: &writer) }
        }
    }
}
