#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Not NIO's ByteBuffer: the core depends only on LMDB and swift-log, and this reads in place from LMDB's mapped pages.
/// Reads binary data written by ``ByteWriter`` from a borrowed buffer, checking every bound.
///
/// Every read throws ``EventStoreError/Code/corrupt`` instead of reading past the end, so a
/// damaged or hostile input can never crash the process.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var offset: Int = 0

    init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    var remaining: Int { buffer.count - offset }
    var isAtEnd: Bool { offset >= buffer.count }

    static func corrupt(_ what: String) -> EventStoreError {
        EventStoreError(.corrupt, "truncated or malformed \(what)")
    }

    @inline(__always)
    mutating func readByte() throws -> UInt8 {
        guard offset < buffer.count else { throw ByteReader.corrupt("data") }
        defer { offset += 1 }
        return buffer[offset]
    }

    @inline(__always)
    mutating func readUInt64() throws -> UInt64 { try readBigEndian() }

    @inline(__always)
    mutating func readUInt32() throws -> UInt32 { try readBigEndian() }

    /// A big-endian integer of `T`'s width.
    @inline(__always)
    mutating func readBigEndian<T: FixedWidthInteger>() throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw ByteReader.corrupt("integer") }
        var value = T.zero
        withUnsafeMutableBytes(of: &value) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + size]))
        }
        offset += size
        return T(bigEndian: value)
    }

    @inline(__always)
    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            if shift == 63 && byte > 1 { throw ByteReader.corrupt("varint") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw ByteReader.corrupt("varint") }
        }
    }

    /// A varint that counts something: it must fit in the bytes that are left.
    @inline(__always)
    mutating func readCount(minimumBytesEach: Int = 1) throws -> Int {
        let value = try readVarint()
        guard value <= UInt64(remaining / max(minimumBytesEach, 1)) else { throw ByteReader.corrupt("count") }
        return Int(value)
    }

    @inline(__always)
    mutating func readBytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw ByteReader.corrupt("bytes") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    @inline(__always)
    /// A string from bytes this library wrote itself: invalid UTF-8 becomes U+FFFD.
    mutating func readUncheckedString() throws -> String {
        let count = try readCount()
        return String(decoding: try readBytes(count), as: UTF8.self)
    }

    mutating func readString() throws -> String {
        guard let string = ByteReader.string(validating: try readBytes(try readCount())) else {
            throw ByteReader.corrupt("UTF-8 string")
        }
        return string
    }

    /// Whether `bytes` are ASCII, checked a word at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// Whether `bytes` are valid UTF-8 (without making a string of ASCII).
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        isASCII(bytes) || string(validating: bytes) != nil
    }

    /// The string of `bytes` when they are valid UTF-8.
    static func string(validating bytes: UnsafeRawBufferPointer) -> String? {
        // ASCII (field names, ids, most values) is valid as it is.
        let count = bytes.count
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        // Decoding repairs invalid UTF-8; the bytes were valid exactly when nothing was repaired.
        // (About three times faster than `String(validating:as:)`, which runs unspecialized.)
        var string = String(decoding: bytes, as: UTF8.self)
        let valid = string.withUTF8 { decoded in
            decoded.count == count && (count == 0 || memcmp(decoded.baseAddress!, bytes.baseAddress!, count) == 0)
        }
        return valid ? string : nil
    }

    @inline(__always)
    mutating func readReplicaID() throws -> ReplicaID {
        let high = try readUInt64()
        return ReplicaID(high: high, low: try readUInt64())
    }
}
