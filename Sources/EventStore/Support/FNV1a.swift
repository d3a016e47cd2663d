/// FNV-1a, 64-bit: the one non-cryptographic hash of the project (event digests, log digests,
/// page checksums). It only detects accidents; wherever a forged collision would matter the
/// full bytes are compared as well.
package struct FNV1a: Sendable {
    /// The 64-bit offset basis: the state of an empty input.
    package static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The 64-bit FNV prime.
    package static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// The hash of what was combined so far.
    package var state: UInt64

    /// A hash that starts from `state` (by default, the empty input's).
    package init(state: UInt64 = FNV1a.offsetBasis) { self.state = state }

    /// Combines one byte.
    @inline(__always)
    package mutating func combine(byte: UInt8) {
        state = (state ^ UInt64(byte)) &* FNV1a.prime
    }

    /// Combines a sequence of bytes, in order.
    package mutating func combine(bytes: some Sequence<UInt8>) {
        var state = self.state
        for byte in bytes { state = (state ^ UInt64(byte)) &* FNV1a.prime }
        self.state = state
    }

    /// The same over a buffer: other modules (the sync module's page checksums) call this
    /// concrete form, which is not a generic they would run unspecialized.
    package mutating func combine(bytes: UnsafeRawBufferPointer) {
        var state = self.state
        for byte in bytes { state = (state ^ UInt64(byte)) &* FNV1a.prime }
        self.state = state
    }

    /// The same over an array (see ``combine(bytes:)-(UnsafeRawBufferPointer)``).
    package mutating func combine(bytes: [UInt8]) {
        bytes.withUnsafeBytes { combine(bytes: $0) }
    }

    /// Eight bytes, big-endian.
    package mutating func combine(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            combine(byte: UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
