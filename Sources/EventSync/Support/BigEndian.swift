/// Eight bytes, big-endian: how cursors and server stores write seqs and digests, so that they
/// sort as numbers.
package func bigEndian(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian, Array.init)
}

/// The value of eight big-endian bytes (0 for another length).
package func decodeBigEndian(_ bytes: [UInt8]) -> UInt64 {
    guard bytes.count == 8 else { return 0 }
    return bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
}
