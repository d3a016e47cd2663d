#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The one order of the store's keys and encodings: bytes, the shorter first on a common prefix
// (LMDB's default key order, and the UTF-8 order of names).

/// LMDB's default key order: bytes, then the shorter first on a common prefix.
func compareBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
    let common = min(lhs.count, rhs.count)
    let order = common == 0 ? 0 : Int(memcmp(lhs.baseAddress!, rhs.baseAddress!, common))
    if order != 0 { return order }
    return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
}

/// Orders strings by their UTF-8 bytes: the order of every encoding and key in the store.
@inline(__always)
func utf8Less(_ lhs: String, _ rhs: String) -> Bool {
    var lhs = lhs
    var rhs = rhs
    return lhs.withUTF8 { left in
        rhs.withUTF8 { right in
            let common = min(left.count, right.count)
            let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
            return order != 0 ? order < 0 : left.count < right.count
        }
    }
}

/// The 8 bytes of `bytes` from `offset` as one big-endian integer, zero-padded past the end.
///
/// Two byte strings whose integers differ are in the integers' order (``compareBytes(_:_:)``):
/// a shorter string pads with zeros where a longer one has bytes. Only equal integers need the
/// whole strings compared, so a sort by this prefix first makes most comparisons one integer
/// compare.
@inline(__always)
func bigEndianPrefix(_ bytes: UnsafeRawBufferPointer, from offset: Int = 0) -> UInt64 {
    let available = max(0, min(8, bytes.count - offset))
    if available == 8 { return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    var prefix: UInt64 = 0
    for index in 0..<available { prefix |= UInt64(bytes[offset + index]) << UInt64(56 - 8 * index) }
    return prefix
}

/// ``bigEndianPrefix(_:from:)`` of a string's UTF-8 bytes.
@inline(__always)
func utf8Prefix(_ string: String) -> UInt64 {
    var string = string
    return string.withUTF8 { bigEndianPrefix(UnsafeRawBufferPointer($0)) }
}

extension Dictionary where Key == String {
    /// The dictionary's positions in the UTF-8 order of their keys (the order every encoding
    /// lists fields in).
    ///
    /// The positions are sorted in temporary memory by each key's first 8 bytes as an integer
    /// (``utf8Prefix(_:)``), the keys themselves compared only when those are equal: no value is
    /// retained, no name hashed, and the one allocation is the array returned. (A closure that
    /// visits the positions instead would make the encoders' loops capture their state.)
    func indicesInUTF8Order() -> [Index] {
        if count < 2 { return Array(indices) }
        let keys = self.keys
        return withUnsafeTemporaryAllocation(of: (prefix: UInt64, index: Index).self, capacity: count) { order in
            var filled = 0
            for index in indices {
                order.initializeElement(at: filled, to: (utf8Prefix(keys[index]), index))
                filled += 1
            }
            defer { order.prefix(filled).deinitialize() }
            var sorted = UnsafeMutableBufferPointer(rebasing: order[..<filled])
            func less(_ lhs: (prefix: UInt64, index: Index), _ rhs: (prefix: UInt64, index: Index)) -> Bool {
                lhs.prefix != rhs.prefix ? lhs.prefix < rhs.prefix : utf8Less(keys[lhs.index], keys[rhs.index])
            }
            if filled <= 16 {
                // An insertion sort: the few names of an item or event, without the general
                // sort's set-up (a third of this function's cost when it did them).
                for next in 1..<filled {
                    let moving = sorted[next]
                    var slot = next
                    while slot > 0 && less(moving, sorted[slot - 1]) {
                        sorted[slot] = sorted[slot - 1]
                        slot -= 1
                    }
                    sorted[slot] = moving
                }
            } else {
                sorted.sort(by: less)
            }
            return sorted.map(\.index)
        }
    }
}

/// The number of leading bytes `lhs` and `rhs` have in common, compared 8 bytes at a time.
func commonPrefixCount(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
    let limit = min(lhs.count, rhs.count)
    guard limit > 0, let left = lhs.baseAddress, let right = rhs.baseAddress else { return 0 }
    var offset = 0
    while offset + 8 <= limit {
        let difference =
            left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            ^ right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        if difference != 0 {
            // The first differing byte in memory is the lowest in a little-endian load.
            let memoryOrder = UInt64(littleEndian: difference)
            return offset + memoryOrder.trailingZeroBitCount / 8
        }
        offset += 8
    }
    while offset < limit && lhs[offset] == rhs[offset] { offset += 1 }
    return offset
}
