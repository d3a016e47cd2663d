/// The order of field values in queries: the byte order of their index encoding
/// (``IndexKey``), so that what an index returns and what a filter or a sort means agree.
enum ValueOrder {
    /// Negative, zero or positive as `lhs` orders before, with or after `rhs` (`nil`: missing).
    static func compare(_ lhs: Value?, _ rhs: Value?) -> Int {
        let left = IndexKey.encoded(lhs)
        let right = IndexKey.encoded(rhs)
        return left.withUnsafeBytes { left in right.withUnsafeBytes { right in compareBytes(left, right) } }
    }

    /// Whether two values are equal in query terms (numbers by value, strings by bytes).
    static func equal(_ lhs: Value?, _ rhs: Value?) -> Bool {
        IndexKey.encoded(lhs) == IndexKey.encoded(rhs)
    }

    /// The type class of a value in range comparisons: null, bool, number, string, array, object.
    static func typeClass(_ value: Value?) -> Int {
        switch value {
        case nil: 0
        case .null?: 1
        case .bool?: 2
        case .int?, .double?: 3
        case .string?: 4
        case .array?: 5
        case .object?: 6
        }
    }

    /// `compare(value, bound)` when both are of the same type class, else `nil`.
    static func compareInType(_ value: Value?, _ bound: Value) -> Int? {
        guard typeClass(value) == typeClass(bound) else { return nil }
        return compare(value, bound)
    }
}
