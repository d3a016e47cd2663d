/// SipHash-2-4 with a 64-bit result (Aumasson and Bernstein, 2012): a keyed hash for short
/// messages whose results nobody without the 128-bit key can predict, used as a message
/// authentication code for continuity marks (``EpochKey``).
package struct SipHash24 {
    private var v0: UInt64
    private var v1: UInt64
    private var v2: UInt64
    private var v3: UInt64
    /// The bytes of the message not yet compressed (fewer than 8), little-endian.
    private var tail: UInt64 = 0
    private var length = 0

    /// A hash keyed by `k0` and `k1`, the key's first and last 8 bytes read little-endian.
    package init(k0: UInt64, k1: UInt64) {
        v0 = 0x736f_6d65_7073_6575 ^ k0
        v1 = 0x646f_7261_6e64_6f6d ^ k1
        v2 = 0x6c79_6765_6e65_7261 ^ k0
        v3 = 0x7465_6462_7974_6573 ^ k1
    }

    /// Adds `bytes` to the message.
    package mutating func combine(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            tail |= UInt64(byte) << (8 * UInt64(length & 7))
            length += 1
            if length & 7 == 0 {
                compress(tail)
                tail = 0
            }
        }
    }

    /// Adds `value` to the message as 8 bytes, big-endian.
    package mutating func combine(bigEndian value: UInt64) {
        combine((0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) })
    }

    /// The hash of the message.
    package consuming func finalize() -> UInt64 {
        compress(tail | UInt64(truncatingIfNeeded: length) << 56)
        v2 ^= 0xff
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }

    private mutating func compress(_ word: UInt64) {
        v3 ^= word
        round()
        round()
        v0 ^= word
    }

    private mutating func round() {
        v0 &+= v1
        v1 = v1.rotatedLeft(by: 13)
        v1 ^= v0
        v0 = v0.rotatedLeft(by: 32)
        v2 &+= v3
        v3 = v3.rotatedLeft(by: 16)
        v3 ^= v2
        v0 &+= v3
        v3 = v3.rotatedLeft(by: 21)
        v3 ^= v0
        v2 &+= v1
        v1 = v1.rotatedLeft(by: 17)
        v1 ^= v2
        v2 = v2.rotatedLeft(by: 32)
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(by count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}
