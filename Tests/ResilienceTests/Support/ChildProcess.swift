import EventStoreTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How long the reliability suites run: a fast CI mode by default, `EVENTSTORE_LONG=1` for the
/// long mode, `EVENTSTORE_SEED=n` to re-run one seed.
enum Reliability {
    /// Whether `EVENTSTORE_LONG=1` is set.
    static let isLong = ProcessInfo.processInfo.environment["EVENTSTORE_LONG"] == "1"

    /// The seed given with `EVENTSTORE_SEED`, if any.
    static let fixedSeed: UInt64? = ProcessInfo.processInfo.environment["EVENTSTORE_SEED"].flatMap { UInt64($0) }

    /// `ci` in the default mode, `long` with `EVENTSTORE_LONG=1`.
    static func count(ci: Int, long: Int) -> Int { isLong ? long : ci }
}

/// A child process whose standard output goes to a file (read at any time), killed on demand.
final class ChildProcess: Sendable {
    /// The `evstore-crash` binary built with the tests.
    static let crashToolPath: String = builtExecutable(named: "evstore-crash")

    let process: SpawnedProcess
    let outputPath: String
    let errorPath: String

    /// Starts `executable` with `arguments`.
    init(_ arguments: [String], executable: String = ChildProcess.crashToolPath) throws {
        let base = NSTemporaryDirectory() + "resilience-child-" + UUID().uuidString
        outputPath = base + ".out"
        errorPath = base + ".err"
        process = try SpawnedProcess(
            executable: executable, arguments: arguments, standardOutput: outputPath, standardError: errorPath)
    }

    deinit {
        // The child itself is killed (if still running) when `process` goes.
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    /// The complete lines written so far (a line cut by a kill is left out).
    var lines: [String] {
        guard let data = FileManager.default.contents(atPath: outputPath) else { return [] }
        var text = String(decoding: data, as: UTF8.self)
        if let last = text.lastIndex(of: "\n") {
            text = String(text[...last])
        } else {
            return []
        }
        return text.split(separator: "\n").map(String.init)
    }

    /// Standard error so far.
    var errorText: String {
        FileManager.default.contents(atPath: errorPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Sends SIGKILL and waits until the process is gone. Returns whether it was still running.
    @discardableResult
    func killNow() -> Bool {
        let wasRunning = process.isRunning
        if wasRunning { process.send(signal: SIGKILL) }
        process.waitUntilExit()
        return wasRunning
    }

    /// Waits for the process to end by itself, up to `timeout`; kills it after that.
    func wait(timeout: Duration) async -> Int32? {
        if let termination = await process.termination(within: timeout) { return termination.status }
        killNow()
        return nil
    }

    /// Waits until a line satisfying `predicate` appears (or the process ends, or `timeout`).
    func waitForLine(timeout: Duration, _ predicate: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if lines.contains(where: predicate) { return true }
            if !process.isRunning { return lines.contains(where: predicate) }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}
