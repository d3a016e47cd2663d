/// A small, fast, seeded generator (xoshiro256**, seeded through SplitMix64), so that every
/// engine and every run sees the same workload.
struct SeededRandom: RandomNumberGenerator {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    init(seed: UInt64) {
        var mix = seed
        func splitMix() -> UInt64 {
            mix &+= 0x9E37_79B9_7F4A_7C15
            var z = mix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    mutating func next() -> UInt64 {
        let result = rotate(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotate(s3, 45)
        return result
    }

    /// A uniform integer in `0..<bound` (bound > 0); the tiny modulo bias does not matter here.
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// A uniform integer in `range`.
    mutating func between(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }

    /// A uniform double in `0..<1`.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}

/// FNV-1a, 64-bit: the workload checksum.
struct FNV1a {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    mutating func add(_ string: String) {
        for byte in string.utf8 { add(byte) }
        add(0xFF)
    }

    mutating func add(_ number: Int) {
        var n = UInt64(bitPattern: Int64(number))
        for _ in 0..<8 {
            add(UInt8(truncatingIfNeeded: n))
            n >>= 8
        }
    }

    var hex: String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}
