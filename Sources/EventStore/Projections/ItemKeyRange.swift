/// The item keys (``Keys/item(_:_:)``) from ``lower`` (included) up to ``upper`` (excluded), in
/// the store's key order; a `nil` bound leaves that end open.
///
/// A range of item keys also holds the history chunks of its items: a chunk's key is its item's
/// key followed by NUL and a seq, and an item id holds no NUL.
struct ItemKeyRange: Sendable, Hashable {
    var lower: [UInt8]?
    var upper: [UInt8]?

    /// Every item key.
    static let all = ItemKeyRange(lower: nil, upper: nil)

    /// Whether the range holds every item key.
    var isAll: Bool { lower == nil && upper == nil }

    /// Whether `key` is in the range.
    func contains(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { contains($0) }
    }

    /// Whether `key` is in the range.
    func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        if let lower, lower.withUnsafeBytes({ compareBytes(key, $0) }) < 0 { return false }
        if let upper, upper.withUnsafeBytes({ compareBytes(key, $0) }) >= 0 { return false }
        return true
    }
}
