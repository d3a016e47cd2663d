import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// The command line itself: version, help with examples, usage errors, and no progress output
/// when stderr is not a terminal.
@Suite("evstore command line")
struct CommandLineTests {
    static let commands = [
        "dump", "replay", "explain", "diff", "verify", "rebuild", "stats", "search", "import", "export", "backup",
        "serve",
        "sync", "demo",
    ]

    @Test("--version prints the version and exits 0")
    func version() async throws {
        let result = try await EvstoreProcess.run(["--version"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
    }

    @Test("--help lists every command")
    func help() async throws {
        let result = try await EvstoreProcess.run(["--help"])
        #expect(result.status == 0, "\(result)")
        for command in CommandLineTests.commands {
            #expect(result.stdout.contains("  \(command)"), "--help lists \(command)")
        }
    }

    @Test("each command's --help explains it", arguments: commands)
    func commandHelp(command: String) async throws {
        let result = try await EvstoreProcess.run([command, "--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("USAGE: evstore \(command)"), "\(result)")
        #expect(result.stdout.contains("OVERVIEW:"), "\(result)")
    }

    @Test("an unknown command or option is a usage error (exit 64) with one line naming it")
    func usageErrors() async throws {
        let unknown = try await EvstoreProcess.run(["frobnicate"])
        #expect(unknown.status == 64, "\(unknown)")
        #expect(unknown.stderr.contains("frobnicate"), "\(unknown)")
        let option = try await EvstoreProcess.run(["dump", "/nonexistent", "--bogus"])
        #expect(option.status == 64, "\(option)")
        #expect(option.stderr.contains("--bogus"), "\(option)")
    }

    @Test("long work prints no progress bar when stderr is not a terminal")
    func noProgressWhenPiped() async throws {
        try await withTemporaryDirectory(prefix: "evstore-cli") { directory in
            let path = directory.appending("store")
            try withStore(at: path) { store in
                _ = try store.append((0..<3_000).map { .put("notes", id: "n\($0)", fields: ["title": "note \($0)"]) })
            }
            for arguments in [
                ["rebuild", path], ["verify", path, "--format", "jsonl"], ["export", path],
                ["replay", path, "--to", "2000", "--format", "jsonl"],
            ] {
                let result = try await EvstoreProcess.run(arguments)
                #expect(result.status == 0, "\(result)")
                #expect(
                    result.stderr.isEmpty,
                    "\(arguments[0]) wrote to a non-terminal stderr: \(result.stderr.prefix(200))")
            }
        }
    }
}
