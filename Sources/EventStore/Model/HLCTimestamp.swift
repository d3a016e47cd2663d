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

    /// ISO 8601 time in UTC with milliseconds, then `+logical`: `2023-11-14T22:13:20.000Z+3`.
    public var description: String {
        let milliseconds = physical % 1000
        let seconds = physical / 1000
        let days = Int64(seconds / 86_400)
        let secondOfDay = seconds % 86_400
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        func pad(_ value: some BinaryInteger, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(milliseconds, 3))Z+\(logical)"
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (days from civil, inverted).
    static func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = daysSince1970 + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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
