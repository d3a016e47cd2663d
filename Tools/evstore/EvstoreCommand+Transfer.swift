import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import changes or events from JSON Lines.",
            discussion: """
                Each line is a change stamped now by this replica:
                  {"collection": "notes", "id": "n1", "op": "put", "fields": {"title": "Hi"}}
                or an event as `evstore export` writes it (origin and clock stamp kept).
                Every line is checked before anything is written.

                Examples:
                  evstore import ./store notes.jsonl
                  evstore export ./old | evstore import ./new -
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The JSON Lines file, or - for standard input.") var file: String

        func run() async throws {
            try await runTool {
                let data: Data
                if file == "-" {
                    data = FileHandle.standardInput.readDataToEndOfFile()
                } else {
                    guard let contents = FileManager.default.contents(atPath: file) else { throw ToolError("cannot read \(file)") }
                    data = contents
                }
                let store = try StoreAccess.openWritable(options.store, create: true)
                let result = try Transfer.importLines(data, into: store)
                print("imported \(result.changes) changes and \(result.events) events (\(result.duplicates) already present)")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export the log as JSON Lines (one event a line, in log order).",
            discussion: "Example:\n  evstore export ./store > events.jsonl")

        @OptionGroup var options: StoreOptions
        @Option(help: "The first seq.") var from: UInt64 = 1
        @Option(help: "The last seq.") var to: UInt64 = .max

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try Transfer.export(from: store, from: from, to: to, output: .standard)
            }
        }
    }

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a compacted, consistent copy of a live store.",
            discussion: "Example:\n  evstore backup ./store ./backups/2026-11-22")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The destination: a new or empty directory.") var destination: String

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try store.backup(to: destination)
                print("backed up \(try store.head()) events to \(destination)")
            }
        }
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sync a store with a sync server once, and print what moved.",
            discussion: """
                Example:
                  evstore sync ./phone --remote http://127.0.0.1:8080 --token secret --store-name notes
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The server's base URL.") var remote: String
        @Option(help: "The bearer token.") var token: String?
        @Option(help: "The store's name on the server (default: the directory's name).") var storeName: String?
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openWritable(options.store, create: true)
                let name = storeName ?? URL(fileURLWithPath: options.store).lastPathComponent
                let synchronizer = Synchronizer(
                    store: store, transport: HTTPTransport(baseURL: remote, token: token, storeName: name))
                let report = try await synchronizer.sync()
                switch format.resolved {
                case .jsonl:
                    print(Rendering.jsonLine([
                        "pushed": .int(Int64(report.pushed)), "pulled": .int(Int64(report.pulled)),
                        "duplicates": .int(Int64(report.duplicates)), "conflicts": .int(Int64(report.conflicts)),
                        "server_head": .int(Int64(report.serverHead)), "epoch_changed": .bool(report.epochChanged),
                    ]))
                case .table:
                    print("pushed \(report.pushed), pulled \(report.pulled), duplicates \(report.duplicates), conflicts \(report.conflicts)")
                    for record in report.conflictRecords.prefix(20) {
                        print("  conflict \(record.collection)/\(record.item).\(record.field): \(Rendering.text(record.winner.value)) won over \(Rendering.text(record.loser.value))")
                    }
                }
            }
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the sync server.",
            discussion: """
                The tokens file has one token a line: TOKEN STORE [STORE…], with * for every store
                and # for comments. Stops gracefully on SIGINT or SIGTERM.

                Example:
                  evstore serve --data ./server-data --port 8080 --tokens tokens.txt
                """)

        @Option(help: "The data directory (one store per subdirectory).") var data: String
        @Option(help: "The address to listen on.") var host = "127.0.0.1"
        @Option(help: "The port (0: any free port).") var port = 8080
        @Option(help: "The tokens file.") var tokens: String

        func run() async throws {
            try await runTool {
                var configuration: SyncServer.Configuration
                do {
                    configuration = try SyncServer.Configuration(dataDirectory: data, host: host, port: port, tokensFile: tokens)
                } catch {
                    throw ToolError("cannot read the tokens file \(tokens): \(error)")
                }
                LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
                configuration.logger = Logger(label: "evstore.server")
                try await SyncServer(configuration: configuration).runService()
            }
        }
    }

    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A short story: two offline replicas, a conflict, sync, search, explain.",
            discussion: """
                Starts a sync server on a free loopback port, edits notes on a "phone" and a
                "laptop" replica while offline, syncs them and shows the result. Re-runnable: each run
                starts from fresh replicas in the directory.

                Example:
                  evstore demo --dir /tmp/evstore-demo
                """)

        @Option(help: "Where the demo keeps its data (default: ~/.evstore/demo).") var dir: String?

        func run() async throws {
            try await runTool {
                try await EvstoreKit.Demo(directory: dir ?? EvstoreKit.Demo.defaultDirectory).run(output: .standard)
            }
        }
    }
}
