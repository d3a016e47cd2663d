/// Appends binary data to a growing byte array: the writing half of the store's codecs.
///
/// Multi-byte integers are big-endian (so keys sort numerically); counts and lengths are
/// LEB128 varints.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    mutating func write(_ byte: UInt8) { bytes.append(byte) }

    @inline(__always)
    mutating func write(bigEndian value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func write(bigEndian value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func write(varint value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    mutating func write(varint value: Int) { write(varint: UInt64(value)) }

    /// A length-prefixed UTF-8 string.
    @inline(__always)
    mutating func write(string: String) {
        var string = string
        string.withUTF8 { utf8 in
            write(varint: utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Raw bytes with no length.
    @inline(__always)
    mutating func write<C: Collection<UInt8>>(raw: C) { bytes.append(contentsOf: raw) }

    @inline(__always)
    mutating func write(_ replica: ReplicaID) {
        write(bigEndian: replica.high)
        write(bigEndian: replica.low)
    }
}
