import ArgumentParser
import EvstoreKit
import Foundation

extension EvstoreCommand {
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sync a store with a sync server once (or until interrupted), and print what moved.",
            discussion: """
                Pushes the events the server lacks, pulls the ones this store lacks, and reports \
                conflicts found on the way. Creates the store when the directory is missing or \
                empty (a new replica).

                With --follow, keeps the store in sync until interrupted (Ctrl-C or SIGTERM): \
                local changes are pushed as they commit, other replicas' changes are pulled as \
                they reach the server (a pull waits there for them), failures are retried with \
                backoff; a line is printed each time a sync ends.

                Examples:
                  evstore sync ./phone --remote http://127.0.0.1:8080 --token secret --store-name notes
                  evstore sync ./phone --remote http://127.0.0.1:8080 --token secret --store-name notes --follow
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The server's base URL.") var remote: String
        @Option(help: "The bearer token.") var token: String?
        @Option(help: "The store's name on the server (default: the directory's name).") var storeName: String?
        @Option(help: ArgumentHelp("The deadline of each request, in seconds.", valueName: "seconds")) var timeout = 60
        @Flag(help: "Keep the store in sync until interrupted.") var follow = false
        @OptionGroup var format: FormatOptions

        func validate() throws {
            guard remote.hasPrefix("http://") || remote.hasPrefix("https://") else {
                throw ValidationError("--remote must be an http:// or https:// URL")
            }
            if timeout < 1 { throw ValidationError("--timeout must be at least 1 second") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openWritable(options.store, create: true)
                let name = storeName ?? URL(fileURLWithPath: options.store).standardizedFileURL.lastPathComponent
                if follow {
                    try await SyncFollow.run(
                        store: store, remote: remote, token: token, storeName: name, timeout: .seconds(timeout),
                        format: format.resolved, output: .standardFlushed, until: Interruption.wait)
                    return
                }
                try await SyncOnce.run(
                    store: store, remote: remote, token: token, storeName: name, timeout: .seconds(timeout),
                    format: format.resolved,
                    output: .standard)
            }
        }
    }
}
