import Foundation

/// A progress bar with rate and ETA on standard error, drawn only when standard error is a
/// terminal (so logs and pipes stay clean):
///
/// ```text
/// verify ███████████████░░░░░░░░░░░░░░░  52%  520000/1000000 events  81234/s  ETA 6s
/// ```
package final class ProgressBar: @unchecked Sendable {
    private let label: String
    private let unit: String
    private let enabled: Bool
    private let started = Date()
    private let lock = NSLock()
    private var lastDraw = Date.distantPast
    private var drawn = false

    /// Creates a bar; it draws nothing when standard error is not a terminal.
    ///
    /// - Parameters:
    ///   - label: What is being done (`rebuild`, `import`).
    ///   - unit: What is counted (`events`).
    package init(_ label: String, unit: String = "events") {
        self.label = label
        self.unit = unit
        self.enabled = isatty(STDERR_FILENO) == 1
    }

    /// Shows `done` of `total` (redrawn at most ten times a second).
    package func update(_ done: UInt64, of total: UInt64) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) > 0.1 || done >= total else { return }
        lastDraw = now
        drawn = true
        FileHandle.standardError.write(
            Data(ProgressBar.line(label, unit, done, total, now.timeIntervalSince(started)).utf8))
    }

    /// Ends the bar's line (when one was drawn).
    package func finish() {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        if drawn { FileHandle.standardError.write(Data("\n".utf8)) }
        drawn = false
    }

    /// The text of the bar, starting with a carriage return.
    static func line(_ label: String, _ unit: String, _ done: UInt64, _ total: UInt64, _ elapsed: TimeInterval)
        -> String
    {
        let elapsed = max(elapsed, 0.001)
        let rate = Double(done) / elapsed
        let fraction = total == 0 ? 1 : min(Double(done) / Double(total), 1)
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let remaining = rate > 0 ? Double(total - min(done, total)) / rate : 0
        let percent = Int((fraction * 100).rounded(.down))
        return "\r\(label) \(bar) \(percent)%  \(done)/\(total) \(unit)  \(Int(rate))/s  ETA \(duration(remaining))  "
    }

    /// `7s`, `2m05s`, `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total)s" }
        if total < 3600 { return "\(total / 60)m" + String(format: "%02ds", total % 60) }
        return "\(total / 3600)h" + String(format: "%02dm", total % 3600 / 60)
    }
}
