/// A byte string used as a dictionary key and sorted in LMDB's key order: hashes its bytes in
/// one call and compares with `memcmp` (an `[UInt8]` key hashes and compares byte by byte).
struct ByteKey: Hashable, Comparable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        lhs.bytes.count == rhs.bytes.count && compare(lhs.bytes, rhs.bytes) == 0
    }

    static func < (lhs: ByteKey, rhs: ByteKey) -> Bool { compare(lhs.bytes, rhs.bytes) < 0 }

    /// LMDB's default key order (``compareBytes(_:_:)``).
    static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in compareBytes(l, r) } }
    }
}
