package import EventStore
import Foundation

/// Parses clock stamps as the tool prints them.
package enum ClockArgument {
    /// A stamp from its decimal raw value (`117659663177809921`, as JSON lines carry it) or its
    /// printed form (`2026-11-22T10:39:41.595Z+1`; without `+logical` it means `+0`, and the
    /// milliseconds are optional).
    ///
    /// ```swift
    /// ClockArgument.parse("2026-11-22T10:39:41.595Z+1")
    /// ```
    ///
    /// - Returns: The stamp, or `nil` when `text` is neither form.
    package static func parse(_ text: String) -> HLCTimestamp? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let raw = UInt64(text) { return HLCTimestamp(rawValue: raw) }
        guard let z = text.lastIndex(of: "Z") else { return nil }
        var logical: UInt16 = 0
        let suffix = text[text.index(after: z)...]
        if !suffix.isEmpty {
            guard suffix.first == "+", let value = UInt16(suffix.dropFirst()) else { return nil }
            logical = value
        }
        var time = text[..<z]
        var milliseconds: UInt64 = 0
        if let dot = time.lastIndex(of: "."), time[dot...].count > 1 {
            let digits = time[time.index(after: dot)...]
            guard digits.count <= 3, let value = UInt64(digits) else { return nil }
            milliseconds = value * [1, 100, 10, 1][digits.count]
            time = time[..<dot]
        }
        guard let date = try? Date.ISO8601FormatStyle().parse(String(time) + "Z") else { return nil }
        let seconds = date.timeIntervalSince1970.rounded()
        guard seconds >= 0 else { return nil }
        return HLCTimestamp(physical: UInt64(seconds) * 1000 + milliseconds, logical: logical)
    }
}
