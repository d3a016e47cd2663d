public import Foundation

/// A hybrid logical clock stamp: 48 bits of physical milliseconds since 1970, then a 16-bit
/// logical counter. Stamps compare as their 64-bit raw value.
///
/// ```swift
/// let stamp = HLCTimestamp(physical: 1_700_000_000_000, logical: 3)
/// print(stamp)   // 2023-11-14T22:13:20.000Z+3
/// ```
public struct HLCTimestamp: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The packed value: `physical << 16 | logical`.
    public let rawValue: UInt64

    /// Creates a stamp from its packed value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Creates a stamp from milliseconds since 1970 and a logical counter.
    public init(physical: UInt64, logical: UInt16) {
        rawValue = (physical << 16) | UInt64(logical)
    }

    /// The zero stamp, before every other.
    public static let zero = HLCTimestamp(rawValue: 0)

    /// Milliseconds since 1970.
    public var physical: UInt64 { rawValue >> 16 }
    /// The logical counter.
    public var logical: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// The physical part as a date.
    public var date: Date { Date(timeIntervalSince1970: Double(physical) / 1000) }

    /// ISO 8601 time with milliseconds, then `+logical`.
    public var description: String {
        let seconds = Double(physical) / 1000
        var iso = Date(timeIntervalSince1970: seconds).formatted(
            .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true)
                .timeSeparator(.colon))
        if !iso.hasSuffix("Z") { iso += "Z" }
        return iso + "+\(logical)"
    }

    /// Orders by the raw value.
    public static func < (lhs: HLCTimestamp, rhs: HLCTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The total order of writes: the clock stamp, then the origin replica to break ties.
///
/// Two different events never have the same stamp: one origin never repeats a clock value.
public struct Stamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The clock stamp.
    public var hlc: HLCTimestamp
    /// The replica that wrote the event.
    public var origin: ReplicaID

    /// Creates a stamp.
    public init(hlc: HLCTimestamp, origin: ReplicaID) {
        self.hlc = hlc
        self.origin = origin
    }

    /// Orders by clock stamp, then origin.
    public static func < (lhs: Stamp, rhs: Stamp) -> Bool {
        lhs.hlc != rhs.hlc ? lhs.hlc < rhs.hlc : lhs.origin < rhs.origin
    }

    /// `hlc@origin`.
    public var description: String { "\(hlc)@\(origin)" }
}
