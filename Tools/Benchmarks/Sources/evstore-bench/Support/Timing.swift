import Foundation

#if canImport(CDispatch)
    // With swift-nio in the module graph, `timespec` resolves to the declaration in CDispatch's
    // headers, and member import visibility wants that module imported here.
    import CDispatch
#endif

/// Monotonic time in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Accumulates the time spent inside `measure` blocks, so that preparing the input of each
/// step (building changes, encoding rows) stays outside the figure.
struct Stopwatch {
    private(set) var nanoseconds: UInt64 = 0
    /// The longest single measurement.
    private(set) var slowest: UInt64 = 0

    @inline(__always)
    mutating func measure<T>(_ body: () throws -> T) rethrows -> T {
        let start = monotonicNanoseconds()
        defer {
            let elapsed = monotonicNanoseconds() - start
            nanoseconds += elapsed
            slowest = max(slowest, elapsed)
        }
        return try body()
    }

    /// The longest single measurement, in milliseconds.
    var slowestMilliseconds: Double { Double(slowest) / 1e6 }

    var seconds: Double { Double(nanoseconds) / 1e9 }

    /// `count` operations over the measured time, per second.
    func rate(_ count: Int) -> Double {
        nanoseconds == 0 ? 0 : Double(count) / seconds
    }
}

/// Latency samples in nanoseconds, with percentiles in milliseconds.
struct LatencySamples {
    private(set) var samples: [UInt64] = []

    mutating func record(_ nanoseconds: UInt64) { samples.append(nanoseconds) }

    /// The `p`-th percentile (0…100), nearest rank, in milliseconds.
    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return Double(sorted[min(max(rank, 0), sorted.count - 1)]) / 1e6
    }

    var totalSeconds: Double { Double(samples.reduce(0, +)) / 1e9 }
}
