import EventStoreTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The tests' way of starting programs: files for the standard streams, exit statuses and
/// signals, nothing inherited but standard input, output and error, however many descriptors
/// are open (the condition under which Foundation's `Process.run()` crashes the test process on
/// Linux; see ``SpawnedProcess``), and no test going through Foundation's `Process` at all.
@Suite("Spawned processes")
struct SpawnedProcessTests {
    @Test("standard output and error go to the given files; the exit status comes back")
    func outputErrorAndExitStatus() throws {
        let directory = TemporaryDirectory(prefix: "spawn-output")
        defer { directory.remove() }
        let (output, error) = (directory.appending("out"), directory.appending("err"))
        let child = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "echo to-out; echo to-err >&2; exit 3"], standardOutput: output,
            standardError: error)
        #expect(child.waitUntilExit() == .exit(3))
        #expect(!child.isRunning)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "to-out\n")
        #expect(try String(contentsOfFile: error, encoding: .utf8) == "to-err\n")
    }

    @Test("standard input comes from the given file, in the given working directory")
    func inputAndWorkingDirectory() throws {
        let directory = TemporaryDirectory(prefix: "spawn-input")
        defer { directory.remove() }
        let (input, output) = (directory.appending("in"), directory.appending("out"))
        try Data("from-stdin\n".utf8).write(to: URL(fileURLWithPath: input))
        let child = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "pwd -P; cat"], standardInput: input, standardOutput: output,
            currentDirectory: directory.path)
        #expect(child.waitUntilExit() == .exit(0))
        let resolved = URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
        #expect(try String(contentsOfFile: output, encoding: .utf8) == resolved + "\nfrom-stdin\n")
    }

    @Test("a signal ends the child and is reported; a timed wait on a running child returns nil")
    func signalsAndTimedWaits() async throws {
        let child = try SpawnedProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(child.isRunning)
        #expect(await child.termination(within: .milliseconds(50)) == nil)
        child.send(signal: SIGTERM)
        #expect(await child.termination(within: .seconds(20)) == .signal(SIGTERM))
        #expect(child.waitUntilExit().status == SIGTERM)
        child.send(signal: SIGKILL)  // reaped already: sends nothing
    }

    @Test(
        "with 1,500 descriptors open (more than one 32 KiB /proc/self/fd read), the child inherits only 0, 1 and 2",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs /proc"))
    func onlyTheStandardStreamsAreInherited() throws {
        let directory = TemporaryDirectory(prefix: "spawn-descriptors")
        defer { directory.remove() }
        // Opened without O_CLOEXEC: only the launcher keeps them from the child.
        let opened = (0..<1_500).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in opened where descriptor >= 0 { close(descriptor) } }
        #expect(opened.allSatisfy { $0 >= 0 })
        let output = directory.appending("out")
        // `ls` itself reads the directory through one more descriptor (3).
        let child = try SpawnedProcess(executable: "/bin/ls", arguments: ["/proc/self/fd"], standardOutput: output)
        #expect(child.waitUntilExit() == .exit(0))
        let listing = try String(contentsOfFile: output, encoding: .utf8)
        let inherited = listing.split(separator: "\n").compactMap { Int($0) }
        #expect(Set(inherited).isSubset(of: [0, 1, 2, 3]), "\(inherited.count) descriptors: \(inherited.prefix(10))")
    }

    @Test("a program that cannot be started is an error, not a child")
    func missingProgram() {
        #expect(throws: SpawnedProcess.Failure.self) {
            try SpawnedProcess(executable: "/nonexistent/program")
        }
    }

    /// Foundation's `Process.run()` is what crashed full test runs (see ``SpawnedProcess``);
    /// this keeps it out of the libraries, the tools they build and the tests. (The benchmark
    /// package under Tools/Benchmarks runs in processes of its own.)
    @Test("no source or test of the package starts a program through Foundation's Process")
    func foundationProcessIsNotUsed() throws {
        // This file is Tests/ResilienceTests/SpawnedProcessTests.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let use = try Regex(#"\bProcess(\(\)|\.run\(|\.launchedProcess\()"#)
        var uses: [String] = []
        for folder in ["Sources", "Tests", "Tools/evstore", "Tools/evstore-crash"] {
            let base = root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let file as String in files
            where file.hasSuffix(".swift") && !file.split(separator: "/").contains(".build") {
                let text = try String(contentsOfFile: base.appendingPathComponent(file).path, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(use) {
                    uses.append("\(folder)/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(uses.isEmpty, "start programs with SpawnedProcess instead: \(uses)")
    }
}
