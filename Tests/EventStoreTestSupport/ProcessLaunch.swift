public import Foundation

/// Starts child processes one at a time.
///
/// The tool and crash suites start many children from parallel tests, and the test process was
/// seen to die with SIGSEGV inside swift-corelibs-foundation's `Process.run()` under that load.
/// Starting children one at a time keeps those calls from overlapping; every suite starts its
/// children through this.
public enum ProcessLaunch {
    private static let lock = NSLock()

    /// Runs `process.run()` while no other child is being started.
    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }
}
