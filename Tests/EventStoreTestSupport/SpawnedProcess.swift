import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`: how every test starts a program.
///
/// Tests do not start children with Foundation's `Process`. On Linux, `Process.run()` of
/// swift-corelibs-foundation (Swift 6.3 and earlier) lists `/proc/self/fd` to close the
/// descriptors a child must not inherit, and copies each entry's `d_name` as a whole 256-byte
/// array although glibc returns records of 24 bytes or so (swiftlang/swift-corelibs-foundation
/// pull request 5472). When the last record of glibc's 32 KiB directory buffer ends within 256
/// bytes of an unmapped page, the copy faults and the whole test process dies with SIGSEGV
/// (`__memcpy_*` under `Process.run()`), whatever test happens to be running. The buffer fills
/// only when more than about 1,350 descriptors are open, as they are in a full parallel run.
/// Starting children one at a time does not help: the over-read needs no second thread.
///
/// The child gets standard input, output and error from the given files (`/dev/null` when
/// `nil`), no other descriptor of this process, an empty signal mask with default signal
/// actions, a process group of its own, and this process's environment.
///
/// ```swift
/// let child = try SpawnedProcess(executable: "/bin/sh", arguments: ["-c", "echo hi"], standardOutput: path)
/// #expect(child.waitUntilExit() == .exit(0))
/// ```
public final class SpawnedProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// It exited with this status.
        case exit(Int32)
        /// A signal ended it.
        case signal(Int32)

        /// The exit status, or the signal number when a signal ended the child (as Foundation's
        /// `terminationStatus`).
        public var status: Int32 {
            switch self {
            case .exit(let status), .signal(let status): status
            }
        }

        /// `exit N` or `signal N`.
        public var description: String {
            switch self {
            case .exit(let status): "exit \(status)"
            case .signal(let number): "signal \(number)"
            }
        }

        /// Decodes a status from `waitpid`.
        init(waitStatus: Int32) {
            let signal = waitStatus & 0x7f
            self = signal == 0 ? .exit((waitStatus >> 8) & 0xff) : .signal(signal)
        }
    }

    /// A failed `posix_spawn` (or one of its preparations).
    public struct Failure: Error, CustomStringConvertible {
        /// The call that failed.
        public var call: String
        /// The `errno` value it returned.
        public var code: Int32

        /// The call and the system's message for the code.
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// The child's process id.
    public let processIdentifier: Int32
    /// How the child ended, once reaped. The id is not reused before that, so
    /// ``send(signal:)`` checks it under this lock.
    private let ended = Mutex<Termination?>(nil)

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: The program's path (not searched in `PATH`).
    ///   - arguments: The arguments after the program's name.
    ///   - standardInput: A file to read, or `nil` for `/dev/null`.
    ///   - standardOutput: A file to create or truncate, or `nil` for `/dev/null`.
    ///   - standardError: A file to create or truncate, or `nil` for `/dev/null`.
    ///   - currentDirectory: The child's working directory, or `nil` for this process's.
    /// - Throws: ``Failure`` when the program cannot be started.
    public init(
        executable: String, arguments: [String] = [], standardInput: String? = nil, standardOutput: String? = nil,
        standardError: String? = nil, currentDirectory: String? = nil
    ) throws {
        var actions = SpawnFileActions()
        try Failure.check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        let streams: [(Int32, String?, Int32)] = [
            (0, standardInput, O_RDONLY), (1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC),
            (2, standardError, O_WRONLY | O_CREAT | O_TRUNC),
        ]
        for (descriptor, path, flags) in streams {
            try Failure.check(
                "posix_spawn_file_actions_addopen",
                posix_spawn_file_actions_addopen(&actions, descriptor, path ?? "/dev/null", flags, 0o644))
        }
        try SpawnExtensions.closeInheritedDescriptors(&actions)
        if let currentDirectory {
            guard let changeDirectory = SpawnExtensions.changeDirectory else {
                throw Failure(call: "posix_spawn_file_actions_addchdir_np", code: ENOSYS)
            }
            try Failure.check("posix_spawn_file_actions_addchdir_np", changeDirectory(&actions, currentDirectory))
        }

        var attributes = SpawnAttributes()
        try Failure.check("posix_spawnattr_init", posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }
        try SpawnExtensions.configure(&attributes)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        try Failure.check("posix_spawn", posix_spawn(&pid, executable, &actions, &attributes, argv, envp))
        processIdentifier = pid
    }

    deinit {
        // No child outlives its test, and none is left a zombie.
        if termination == nil {
            send(signal: SIGKILL)
            waitUntilExit()
        }
    }

    /// How the child ended, or `nil` while it runs. Reaps it once it has ended.
    public var termination: Termination? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(processIdentifier, &status, WNOHANG)
            } while result == -1 && errno == EINTR
            if result == processIdentifier {
                ended = Termination(waitStatus: status)
            } else if result == -1 {
                // ECHILD: reaped by someone else; the status is lost.
                ended = .exit(-1)
            }
            return ended
        }
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { termination == nil }

    /// Sends `signal` (`SIGTERM`, `SIGKILL`…) to the child, unless it has already been reaped.
    public func send(signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Blocks until the child ends.
    @discardableResult
    public func waitUntilExit() -> Termination {
        while true {
            if let termination { return termination }
            // Waits without reaping, so that `termination` alone reaps, under its lock.
            var info = siginfo_t()
            let waited = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT)
            if waited != 0 && errno != EINTR && errno != ECHILD { usleep(1_000) }
        }
    }

    /// Waits up to `timeout` for the child to end, without blocking a thread.
    ///
    /// - Returns: How it ended, or `nil` when it still runs (or the waiting task was cancelled).
    public func termination(within timeout: Duration) async -> Termination? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = Duration.milliseconds(1)
        while true {
            if let termination { return termination }
            let left = deadline - clock.now
            guard left > .zero else { return nil }
            do {
                try await Task.sleep(for: min(pause, left))
            } catch {
                return termination
            }
            pause = min(pause * 2, .milliseconds(20))
        }
    }
}

extension SpawnedProcess.Failure {
    static func check(_ call: String, _ code: Int32) throws {
        if code != 0 { throw SpawnedProcess.Failure(call: call, code: code) }
    }
}

#if canImport(Darwin)
    private typealias SpawnFileActions = posix_spawn_file_actions_t?
    private typealias SpawnAttributes = posix_spawnattr_t?
#else
    private typealias SpawnFileActions = posix_spawn_file_actions_t
    private typealias SpawnAttributes = posix_spawnattr_t
#endif

/// The parts of `posix_spawn` that differ between platforms, or that the C library declares only
/// as extensions (looked up at run time: the Glibc module does not import them).
private enum SpawnExtensions {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<SpawnFileActions>, Int32) -> Int32
    typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<SpawnFileActions>, UnsafePointer<CChar>) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
    static let closeFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29, macOS 10.15).
    static let changeDirectory: AddChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }

    /// Makes the child close every descriptor above standard error (which Foundation's `Process`
    /// does by listing `/proc/self/fd`; this never lists it).
    static func closeInheritedDescriptors(_ actions: inout SpawnFileActions) throws {
        #if canImport(Darwin)
            // POSIX_SPAWN_CLOEXEC_DEFAULT, set with the attributes, does it.
        #else
            if let closeFrom {
                try SpawnedProcess.Failure.check("posix_spawn_file_actions_addclosefrom_np", closeFrom(&actions, 3))
                return
            }
            // An older C library: close every descriptor number the process may have.
            for descriptor in 3..<getdtablesize() {
                try SpawnedProcess.Failure.check(
                    "posix_spawn_file_actions_addclose", posix_spawn_file_actions_addclose(&actions, descriptor))
            }
        #endif
    }

    /// A process group of the child's own, an empty signal mask, and default actions for every
    /// signal (a thread of this process may block or ignore some).
    static func configure(_ attributes: inout SpawnAttributes) throws {
        var flags = Int32(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        try SpawnedProcess.Failure.check(
            "posix_spawnattr_setflags", posix_spawnattr_setflags(&attributes, Int16(flags)))
        try SpawnedProcess.Failure.check("posix_spawnattr_setpgroup", posix_spawnattr_setpgroup(&attributes, 0))
        var none = sigset_t()
        sigemptyset(&none)
        try SpawnedProcess.Failure.check("posix_spawnattr_setsigmask", posix_spawnattr_setsigmask(&attributes, &none))
        var all = sigset_t()
        sigemptyset(&all)
        for number: Int32 in 1..<32 where number != SIGKILL && number != SIGSTOP { sigaddset(&all, number) }
        try SpawnedProcess.Failure.check(
            "posix_spawnattr_setsigdefault", posix_spawnattr_setsigdefault(&attributes, &all))
    }
}
