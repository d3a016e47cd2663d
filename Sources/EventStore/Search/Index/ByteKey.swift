#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// Byte order, shorter first on a common prefix (LMDB's default key order).
    static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        let common = min(lhs.count, rhs.count)
        let order = lhs.withUnsafeBytes { l in
            rhs.withUnsafeBytes { r in common == 0 ? 0 : Int(memcmp(l.baseAddress!, r.baseAddress!, common)) }
        }
        if order != 0 { return order }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }
}
