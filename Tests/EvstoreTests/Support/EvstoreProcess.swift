import EventStoreTestSupport
import Foundation

/// What one run of a program printed, and how it ended.
struct ProcessResult: Sendable, CustomStringConvertible {
    /// The program and its arguments, for failure messages.
    var command: [String]
    /// The exit status (or the signal number when the program was killed).
    var status: Int32
    /// Everything written to standard output.
    var stdout: String
    /// Everything written to standard error.
    var stderr: String
    /// Whether the run was stopped because it took longer than its timeout.
    var timedOut: Bool

    /// The non-empty lines of standard output.
    var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    /// The non-empty lines of standard error.
    var errorLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

    var description: String {
        let name = command.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "?"
        return
            "\(name) \(command.dropFirst().joined(separator: " ")) → status \(status)\(timedOut ? " (timed out)" : "")\n"
            + "stdout: \(stdout.prefix(2000))\nstderr: \(stderr.prefix(2000))"
    }
}

/// A run of the built `evstore` binary (or any other program) in a child process.
///
/// Standard output and standard error go to temporary files, so a chatty child can never block
/// on a full pipe; standard input is a file too (or `/dev/null`).
///
/// ```swift
/// let result = try await EvstoreProcess.run(["dump", store, "--format", "jsonl"])
/// #expect(result.status == 0)
/// ```
final class EvstoreProcess: Sendable {
    /// The path of the `evstore` binary built with the tests.
    static let executablePath: String = locateExecutable()

    /// The child.
    let process: SpawnedProcess
    let command: [String]
    private let stdoutPath: String
    private let stderrPath: String
    private let stdinPath: String?

    /// Starts `evstore` (or `executable`) with `arguments`, feeding it `stdin` when given.
    init(
        _ arguments: [String], stdin: Data? = nil, executable: String = EvstoreProcess.executablePath,
        currentDirectory: String? = nil
    ) throws {
        let base = NSTemporaryDirectory() + "evstore-process-" + UUID().uuidString
        stdoutPath = base + ".out"
        stderrPath = base + ".err"
        command = [executable] + arguments
        if let stdin {
            let path = base + ".in"
            _ = FileManager.default.createFile(atPath: path, contents: stdin)
            stdinPath = path
        } else {
            stdinPath = nil
        }
        process = try SpawnedProcess(
            executable: executable, arguments: arguments, standardInput: stdinPath, standardOutput: stdoutPath,
            standardError: stderrPath, currentDirectory: currentDirectory)
    }

    /// Whether the child is still running.
    var isRunning: Bool { process.isRunning }

    /// What the child has written to standard error so far.
    var stderrSoFar: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// What the child has written to standard output so far.
    var stdoutSoFar: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }

    /// Sends SIGTERM to the child.
    func terminate() { process.send(signal: SIGTERM) }

    /// Waits for the child to exit (killing it after `timeout`) and returns what it printed.
    /// Call once.
    func wait(timeout: Duration = .seconds(60)) async -> ProcessResult {
        var termination = await process.termination(within: timeout)
        let timedOut = termination == nil
        if timedOut {
            process.send(signal: SIGTERM)
            termination = await process.termination(within: .seconds(5))
        }
        if termination == nil { process.send(signal: SIGKILL) }
        let status = (termination ?? process.waitUntilExit()).status
        let result = ProcessResult(
            command: command, status: status,
            stdout: (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "",
            timedOut: timedOut)
        for path in [stdoutPath, stderrPath] + (stdinPath.map { [$0] } ?? []) {
            try? FileManager.default.removeItem(atPath: path)
        }
        return result
    }

    /// Runs `evstore` with `arguments` to the end.
    static func run(
        _ arguments: [String], stdin: Data? = nil, timeout: Duration = .seconds(60),
        executable: String = EvstoreProcess.executablePath, currentDirectory: String? = nil
    ) async throws -> ProcessResult {
        try await EvstoreProcess(arguments, stdin: stdin, executable: executable, currentDirectory: currentDirectory)
            .wait(timeout: timeout)
    }

    /// The `evstore` binary: the `EVSTORE_BINARY` environment variable, else the one built for
    /// the tests.
    private static func locateExecutable() -> String {
        ProcessInfo.processInfo.environment["EVSTORE_BINARY"] ?? builtExecutable(named: "evstore")
    }
}
