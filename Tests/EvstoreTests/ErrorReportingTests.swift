import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// How `evstore` fails: exit status 1 and one clear line on standard error (no stack trace) for a
/// missing store, a directory or file that is not a store, or a damaged data file; exit status 64
/// for usage errors.
@Suite("evstore errors")
struct ErrorReportingTests {
    /// Checks the shape of an operational failure: status 1, nothing on standard output, one line
    /// on standard error that starts with `evstore:` and mentions `mentioning`.
    static func expectOneLineFailure(
        _ result: ProcessResult, mentioning: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "\(result)", sourceLocation: sourceLocation)
        #expect(!result.timedOut, sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(result.errorLines.count == 1, "one line on standard error: \(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("evstore: "), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(mentioning), "\(result)", sourceLocation: sourceLocation)
        for trace in ["Fatal error", "Stack dump", "backtrace", "0x0000"] {
            #expect(!result.stderr.contains(trace), "\(result)", sourceLocation: sourceLocation)
        }
    }

    /// Every command that takes a store, with its other arguments.
    static let commands: [[String]] = [
        ["dump", "STORE"], ["dump", "STORE", "--items"], ["replay", "STORE", "--to", "3"],
        ["explain", "STORE", "--item", "notes/n1"], ["verify", "STORE"], ["stats", "STORE"],
        ["search", "STORE", "hello"], ["export", "STORE"], ["rebuild", "STORE"], ["diff", "STORE", "STORE"],
        ["backup", "STORE", "BACKUP"],
    ]

    @Test("a missing store: exit 1 and one line naming the path", arguments: commands)
    func missingStore(_ command: [String]) async throws {
        try await withTemporaryDirectory(prefix: "evstore-errors") { directory in
            let missing = directory.appending("no-such-store")
            let arguments = command.map {
                $0 == "STORE" ? missing : $0 == "BACKUP" ? directory.appending("backup") : $0
            }
            let result = try await EvstoreProcess.run(arguments)
            ErrorReportingTests.expectOneLineFailure(result, mentioning: missing)
            #expect(!FileManager.default.fileExists(atPath: missing), "a read-only command creates nothing")
        }
    }

    @Test("a directory that is not a store: exit 1, one line, and the directory is left alone")
    func directoryThatIsNotAStore() async throws {
        try await withTemporaryDirectory(prefix: "evstore-errors") { directory in
            let empty = directory.appending("empty")
            let other = directory.appending("other")
            for path in [empty, other] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            try Data("not a store\n".utf8).write(to: URL(fileURLWithPath: other + "/notes.txt"))
            for path in [empty, other] {
                let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
                for command in [["dump", path], ["verify", path], ["stats", path], ["import", path, "-"]] {
                    let result = try await EvstoreProcess.run(command, stdin: command[0] == "import" ? Data() : nil)
                    if command[0] == "import" && path == empty {
                        // An empty directory is a fine place for a new store.
                        #expect(result.status == 0, "\(result)")
                        continue
                    }
                    ErrorReportingTests.expectOneLineFailure(result, mentioning: path)
                    // Read-only commands find no store; import will not make one among other files.
                    let expected = command[0] == "import" ? "\(path) is not a store" : "no store at \(path)"
                    #expect(result.stderr.contains(expected), "\(result)")
                    #expect(
                        try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before,
                        "\(command[0]) created nothing in \(path)")
                }
            }
        }
    }

    @Test("a file where a store is expected: exit 1 and one line")
    func fileInsteadOfDirectory() async throws {
        try await withTemporaryDirectory(prefix: "evstore-errors") { directory in
            let file = directory.appending("store")
            try Data("hello\n".utf8).write(to: URL(fileURLWithPath: file))
            for command in [["dump", file], ["verify", file], ["import", file, "-"]] {
                let result = try await EvstoreProcess.run(command, stdin: Data())
                ErrorReportingTests.expectOneLineFailure(result, mentioning: file)
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["store"],
                "nothing created beside the file")
        }
    }

    @Test("garbage named data.mdb: exit 1, one clear line, and neither the file nor its directory is modified")
    func garbageDataFile() async throws {
        try await withTemporaryDirectory(prefix: "evstore-errors") { directory in
            let store = directory.appending("store")
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
            var random = SeededGenerator(seed: 99)
            let garbage = Data((0..<40_000).map { _ in UInt8.random(in: 0...255, using: &random) })
            try garbage.write(to: URL(fileURLWithPath: store + "/data.mdb"))
            for command in [["dump", store], ["stats", store], ["verify", store], ["replay", store, "--to", "1"]] {
                let result = try await EvstoreProcess.run(command + ["--format", "jsonl"])
                ErrorReportingTests.expectOneLineFailure(result, mentioning: store)
                #expect(result.stderr.contains("not an event store"), "\(result)")
            }
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: store) == ["data.mdb"],
                "no lock.mdb beside a foreign file")
            let result = try await EvstoreProcess.run(
                ["import", store, "-"],
                stdin: Data(#"{"collection": "c", "id": "x", "op": "put", "fields": {"a": 1}}"#.utf8))
            ErrorReportingTests.expectOneLineFailure(result, mentioning: store)
            #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == garbage)
        }
    }

    @Test("a truncated data.mdb: exit 1 and one line, not a crash report")
    func truncatedDataFile() async throws {
        try await withTemporaryDirectory(prefix: "evstore-errors") { directory in
            let history = try SingleReplicaHistory(path: directory.appending("store"), count: 300, seed: 1)
            let dataFile = history.path + "/data.mdb"
            let data = try Data(contentsOf: URL(fileURLWithPath: dataFile))
            try #require(data.count > 3 * 4096)
            try data.prefix(2 * 4096).write(to: URL(fileURLWithPath: dataFile))
            try? FileManager.default.removeItem(atPath: history.path + "/lock.mdb")
            for command in [["dump", history.path, "--items"], ["stats", history.path], ["verify", history.path]] {
                let result = try await EvstoreProcess.run(command + ["--format", "jsonl"])
                ErrorReportingTests.expectOneLineFailure(result, mentioning: history.path)
            }
        }
    }

    /// A command line the parser must refuse, with exit status 64.
    struct UsageError: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test(
        "usage errors: exit 64 and a message on standard error",
        arguments: [
            UsageError(arguments: ["replay", "STORE", "--to", "1", "--at", "2"]),
            UsageError(arguments: ["dump", "STORE", "--bogus"]),
            UsageError(arguments: ["dump", "STORE", "--from", "5", "--to", "2"]),
            UsageError(arguments: ["dump", "STORE", "--format", "xml"]),
            UsageError(arguments: ["dump", "STORE", "--limit", "-1"]),
            UsageError(arguments: ["dump", "STORE", "--items", "--terms"]),
            UsageError(arguments: ["dump"]),
            UsageError(arguments: ["replay", "STORE", "--at", "yesterday"]),
            UsageError(arguments: ["explain", "STORE"]),
            UsageError(arguments: ["search", "STORE", "hello", "--limit", "0"]),
            UsageError(arguments: ["export", "STORE", "--from", "9", "--to", "3"]),
            UsageError(arguments: ["nosuchcommand"]),
            UsageError(arguments: ["explain", "STORE", "--item", "x"]),
        ])
    func usageError(_ usage: UsageError) async throws {
        try await withTemporaryDirectory(prefix: "evstore-errors") { directory in
            let store = directory.appending("store")
            // An id in two collections: `--item x` is ambiguous without --collection.
            try withStore(at: store) { store in
                _ = try store.append([
                    .put("notes", id: "x", fields: ["title": "a"]), .put("tasks", id: "x", fields: ["title": "b"]),
                ])
            }
            let result = try await EvstoreProcess.run(usage.arguments.map { $0 == "STORE" ? store : $0 })
            #expect(result.status == 64, "\(result)")
            #expect(!result.stderr.isEmpty, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(!result.stderr.contains("Fatal error"), "\(result)")
        }
    }
}
