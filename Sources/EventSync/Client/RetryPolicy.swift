import Foundation

/// When automatic sync retries after a failure: exponential backoff with jitter.
///
/// The *n*-th consecutive failure waits `min(maxDelay, initialDelay × multiplierⁿ⁻¹)`, scaled by a
/// random factor in `1 ± jitter` so that many clients do not retry in step.
public struct RetryPolicy: Sendable, Hashable {
    /// The wait after the first failure.
    public var initialDelay: Duration = .seconds(1)
    /// The longest wait.
    public var maxDelay: Duration = .seconds(60)
    /// The growth factor per failure.
    public var multiplier: Double = 2
    /// The random spread, as a fraction of the delay (0…1).
    public var jitter: Double = 0.25

    /// Creates the default policy.
    public init() {}

    /// The wait after `failures` consecutive failures (≥ 1), given a uniform `random` in 0..<1.
    public func delay(afterFailures failures: Int, random: Double) -> Duration {
        let initial = initialDelay.inSeconds
        let maximum = maxDelay.inSeconds
        let base = min(maximum, initial * pow(multiplier, Double(max(0, failures - 1))))
        let spread = 1 + jitter * (2 * random - 1)
        return .milliseconds(Int64(max(0, base * spread) * 1000))
    }
}
