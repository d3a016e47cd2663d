import ArgumentParser
import EvstoreKit
import Foundation

/// `evstore`: inspect, replay, explain, verify, sync and serve event stores.
@main
struct EvstoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evstore",
        abstract: "Inspect, replay, explain, verify, sync and serve EventStore stores.",
        discussion: """
            Read-only commands (dump, replay, explain, diff, verify, stats, search, query, export, \
            backup) open the store read-only and work while an application writes it. Commands \
            that print records take --format table|jsonl (table on a terminal, JSON Lines when \
            piped). Exit status: 0 success, 1 a failed check or operation, 64 a usage error.

            Examples:
              evstore demo
              evstore dump ./store --items --collection notes
              evstore explain ./store --item notes/n1 --field title
            """,
        version: "0.1.0",
        subcommands: [
            Dump.self, Replay.self, Explain.self, Diff.self, Verify.self, Rebuild.self, Stats.self, Search.self,
            QueryCommand.self, Index.self, Import.self, Export.self, Backup.self, Sync.self, Serve.self, Demo.self,
        ]
    )
}

/// The store argument shared by the commands.
struct StoreOptions: ParsableArguments {
    @Argument(help: "The store's directory (it holds data.mdb and lock.mdb).")
    var store: String
}

/// `--format table|jsonl`.
struct FormatOptions: ParsableArguments {
    @Option(help: "Output format: table (default on a terminal) or jsonl (default when piped).")
    var format: OutputFormatArgument?

    var resolved: OutputFormat {
        format?.value ?? (isatty(STDOUT_FILENO) == 1 ? .table : .jsonl)
    }
}

/// `OutputFormat` as an argument.
struct OutputFormatArgument: ExpressibleByArgument {
    let value: OutputFormat

    init?(argument: String) {
        guard let value = OutputFormat(rawValue: argument) else { return nil }
        self.value = value
    }

    static var allValueStrings: [String] { OutputFormat.allCases.map(\.rawValue) }
}

/// Runs a command body, turning failures into one line on standard error and an exit status.
func runTool(_ body: () async throws -> Void) async throws {
    CrashGuard.install()
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ToolError {
        printError(error.message)
        throw ExitCode(error.exitCode)
    } catch {
        printError(ToolError.describe(error))
        throw ExitCode(1)
    }
}

func printError(_ message: String) {
    var standardError = StandardError()
    print("evstore: \(message)", to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
