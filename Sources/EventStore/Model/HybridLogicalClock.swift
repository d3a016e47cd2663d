import Foundation

/// A hybrid logical clock: stamps that follow physical time but never go backwards, and that
/// ratchet past every stamp received from another replica.
///
/// Stamps received from far in the future are refused (``EventStoreError/clockSkew``): one bad
/// clock must not drag every replica's time forward ("HLC poisoning"). A sync client allows the
/// stamps it pulls a wider bound (a day by default; see `Synchronizer.Configuration` in
/// EventSync): its server took them against the server's clock, and a device whose clock is
/// behind must still receive them.
struct HybridLogicalClock: Sendable {
    /// The greatest stamp issued or received.
    private(set) var last: HLCTimestamp
    /// Physical time in milliseconds since 1970.
    let physicalTime: @Sendable () -> UInt64
    /// How far ahead of physical time a received stamp may be.
    let maxSkewMilliseconds: UInt64

    init(last: HLCTimestamp, maxSkewMilliseconds: UInt64, physicalTime: @escaping @Sendable () -> UInt64) {
        self.last = last
        self.maxSkewMilliseconds = maxSkewMilliseconds
        self.physicalTime = physicalTime
    }

    /// The stamp for a new local event: greater than every stamp seen so far.
    mutating func tick() -> HLCTimestamp {
        let now = min(physicalTime(), (1 << 48) - 1)
        if now > last.physical {
            last = HLCTimestamp(physical: now, logical: 0)
        } else if last.logical < UInt16.max {
            last = HLCTimestamp(physical: last.physical, logical: last.logical + 1)
        } else {
            last = HLCTimestamp(physical: last.physical + 1, logical: 0)
        }
        return last
    }

    /// Checks that a received stamp is not too far ahead of physical time: at most
    /// `maxSkewMilliseconds`, or the clock's own bound.
    func validate(_ remote: HLCTimestamp, maxSkewMilliseconds bound: UInt64? = nil) throws {
        try HybridLogicalClock.checkSkew(
            remote, now: physicalTime(), maxSkewMilliseconds: bound ?? maxSkewMilliseconds)
    }

    /// Throws ``EventStoreError/Code/clockSkew`` when `remote` is more than `maxSkewMilliseconds`
    /// ahead of `now`.
    static func checkSkew(_ remote: HLCTimestamp, now: UInt64, maxSkewMilliseconds: UInt64) throws {
        if remote.physical > now &+ maxSkewMilliseconds {
            throw EventStoreError(
                .clockSkew,
                "stamp \(remote) is \(remote.physical - now) ms ahead of this replica's clock (limit \(maxSkewMilliseconds) ms)",
                cause: SkewedStamp(stamp: remote, bound: now &+ maxSkewMilliseconds))
        }
    }

    /// Moves the clock past a received stamp, so later local events order after it.
    mutating func receive(_ remote: HLCTimestamp) {
        if remote > last { last = remote }
    }

    /// Adopts a stored high-water mark (another process may have written since).
    mutating func observe(_ stored: HLCTimestamp) {
        if stored > last { last = stored }
    }

    /// Sets the clock back to `stamp`: only when every stamp the store gave that is later has
    /// been rewritten at or below it (``Store/restamp(from:notAfter:)``), or to the stored clock
    /// (which every commit keeps at or above its stamps).
    mutating func setBack(to stamp: HLCTimestamp) {
        last = stamp
    }
}

/// Milliseconds since 1970 from the system clock.
@Sendable func systemMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
}
