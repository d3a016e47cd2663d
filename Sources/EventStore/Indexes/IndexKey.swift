/// The order-preserving encoding of index keys (database `g<N>.indexes`).
///
/// ```
/// key   = index id (4 bytes, big-endian) · component per field · item id (UTF-8, to the end)
/// component:
///   01                          missing field
///   02                          null
///   03 | 04                     false | true
///   05 · double (8) · rest (2)  a number, int or double, by numeric value
///   06 · escaped UTF-8 · end    a string, by its UTF-8 bytes
///   07 · escaped bytes · end    an array  (its binary encoding: a fixed, deterministic order)
///   08 · escaped bytes · end    an object (likewise)
/// escaped: byte 00 becomes 00 FF; end: 00 01 (the whole value) or 00 02 (truncated)
/// ```
///
/// Byte order equals value order: the type tag orders values of different types (missing <
/// null < false < true < numbers < strings < arrays < objects), the number's 8 bytes are its
/// value as a double with the sign bit flipped (all bits for negatives), and `rest` is the
/// difference between an integer and that double (an integer beyond 2^53 is not exactly a
/// double), offset by 0x8000. `1` and `1.0` encode alike: numbers compare by value.
///
/// Components are prefix-free, so a component followed by anything sorts by the component
/// first. Keys are at most 507 bytes (LMDB's limit less the run prefix): each component may use
/// ``componentCapacity(fieldCount:)`` bytes; a longer string, array or object keeps the longest
/// prefix that fits and ends with `00 02`. Every value extending that prefix is truncated the
/// same way, so a truncated group sits exactly where its values belong among the other entries;
/// only the order *inside* the group is unknown, and a query sorts such a group by the items'
/// real values (and checks its filters on them).
enum IndexKey {
    static let missing: UInt8 = 0x01
    static let null: UInt8 = 0x02
    static let falseTag: UInt8 = 0x03
    static let trueTag: UInt8 = 0x04
    static let number: UInt8 = 0x05
    static let string: UInt8 = 0x06
    static let array: UInt8 = 0x07
    static let object: UInt8 = 0x08

    /// LMDB's largest key (511 bytes) less the run prefix an entry is stored under (``IndexRuns``).
    static let maxKeyBytes = 511 - 4
    /// Bytes before the components: the index id.
    static let prefixBytes = 4

    /// The bytes each component of an index with `fieldCount` fields may use (at least 31).
    static func componentCapacity(fieldCount: Int) -> Int {
        (maxKeyBytes - prefixBytes - Validation.maxItemBytes) / max(fieldCount, 1)
    }

    /// Appends the encoding of `value` (`nil`: a missing field) using at most `capacity` bytes.
    ///
    /// - Returns: Whether the value was truncated.
    @discardableResult
    static func append(_ value: Value?, capacity: Int = .max, to key: inout [UInt8]) -> Bool {
        guard let value else {
            key.append(missing)
            return false
        }
        switch value {
        case .null: key.append(null)
        case .bool(let flag): key.append(flag ? trueTag : falseTag)
        case .int(let integer):
            key.append(number)
            let rounded = Double(integer)
            appendOrdered(rounded, to: &key)
            // The integer's distance from its double: |rest| ≤ 1024 for any Int64.
            let rest: Int64
            if rounded >= 9_223_372_036_854_775_808.0 {
                rest = (integer &- Int64.max) &- 1
            } else {
                rest = integer &- Int64(rounded)
            }
            let offset = UInt16(truncatingIfNeeded: rest &+ 0x8000)
            key.append(UInt8(offset >> 8))
            key.append(UInt8(offset & 0xFF))
        case .double(let double):
            key.append(number)
            appendOrdered(double, to: &key)
            key.append(0x80)
            key.append(0x00)
        case .string(let string):
            key.append(self.string)
            return appendEscaped(string.utf8, capacity: capacity - 1, to: &key)
        case .array, .object:
            var writer = ByteWriter(capacity: 64)
            writer.write(value)
            key.append(value.arrayValue != nil ? array : object)
            return appendEscaped(writer.bytes, capacity: capacity - 1, to: &key)
        }
        return false
    }

    /// The encoding of one value, never truncated: the order of values in queries.
    static func encoded(_ value: Value?) -> [UInt8] {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return bytes
    }

    private static func appendOrdered(_ double: Double, to key: inout [UInt8]) {
        let normalized = double == 0 ? 0.0 : double  // -0.0 and 0.0 are one value
        let bits = normalized.bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        withUnsafeBytes(of: ordered.bigEndian) { key.append(contentsOf: $0) }
    }

    /// Appends `bytes` escaped, then `00 01`; or, when that exceeds `capacity`, the longest
    /// escaped prefix that fits with `00 02` (never splitting an escape pair).
    private static func appendEscaped<Bytes: Sequence<UInt8>>(_ bytes: Bytes, capacity: Int, to key: inout [UInt8])
        -> Bool
    {
        let content = capacity - 2
        let start = key.count
        for byte in bytes {
            let width = byte == 0 ? 2 : 1
            if key.count - start + width > content {
                key.append(0)
                key.append(2)
                return true
            }
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
        }
        key.append(0)
        key.append(1)
        return false
    }

    /// The end of the component starting at `offset`, and whether it is truncated.
    static func component(in key: UnsafeRawBufferPointer, at offset: Int) throws -> (end: Int, truncated: Bool) {
        guard offset < key.count else { throw EventStoreError(.corrupt, "index key ends inside its values") }
        switch key[offset] {
        case missing, null, falseTag, trueTag: return (offset + 1, false)
        case number:
            guard offset + 11 <= key.count else { throw EventStoreError(.corrupt, "index key: short number") }
            return (offset + 11, false)
        case string, array, object:
            var index = offset + 1
            while index + 1 < key.count {
                if key[index] == 0 {
                    switch key[index + 1] {
                    case 0xFF: index += 2
                    case 1: return (index + 2, false)
                    case 2: return (index + 2, true)
                    default: throw EventStoreError(.corrupt, "index key: bad escape")
                    }
                } else {
                    index += 1
                }
            }
            throw EventStoreError(.corrupt, "index key: unterminated value")
        default:
            throw EventStoreError(.corrupt, "index key: unknown value tag \(key[offset])")
        }
    }

    /// The smallest byte string greater than every string that starts with `prefix`
    /// (`nil`: none, the prefix is all FF).
    static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }
}
