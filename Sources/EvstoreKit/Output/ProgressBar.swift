import Foundation

/// A progress bar with rate and ETA on standard error — only when standard error is a terminal.
public final class ProgressBar: @unchecked Sendable {
    private let label: String
    private let enabled: Bool
    private let started = Date()
    private let lock = NSLock()
    private var lastDraw = Date.distantPast

    /// Creates a bar; it draws nothing when standard error is not a terminal.
    public init(_ label: String) {
        self.label = label
        self.enabled = isatty(STDERR_FILENO) == 1
    }

    /// Shows `done` of `total`.
    public func update(_ done: UInt64, of total: UInt64) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) > 0.1 || done >= total else { return }
        lastDraw = now
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        let fraction = total == 0 ? 1 : min(Double(done) / Double(total), 1)
        let width = 30
        let filled = Int(fraction * Double(width))
        let eta = rate > 0 ? Double(total - min(done, total)) / rate : 0
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let text = String(format: "\r%@ %@ %3.0f%% %llu/%llu  %.0f/s  ETA %.0fs ", label, bar, fraction * 100, done, total, rate, eta)
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Ends the bar's line.
    public func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
