import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the log and compare every projection with a rebuild, byte for byte.",
            discussion: """
                Exit status 0 only when the log is sound and the projections equal a rebuild. With
                --against, also every event id the two stores both hold must name the same event
                (a replica restored from a backup or copied may have reused its ids).

                Examples:
                  evstore verify ./store
                  evstore verify ./phone --against /var/lib/evstore/notes
                  evstore verify notes --postgres postgres://evstore@db/evstore

                With --postgres URL, STORE is the name of a store that sync servers keep in that \
                PostgreSQL database (which keeps the log only): its whole log is read through the \
                sync service and checked — seqs dense, no event twice, every page's checksum, and \
                the log digest the server reports against the events.
                """)

        @OptionGroup var options: StoreOptions
        @OptionGroup var format: FormatOptions
        @Option(name: .long, help: "Another replica (or a server's store) whose event ids must name the same events.")
        var against: String?
        @Option(
            help: ArgumentHelp(
                "A sync server's PostgreSQL database; STORE is then a store's name there (repeat, in the deployment's "
                    + "order, for stores spread over several databases).", valueName: "url"))
        var postgres: [String] = []

        func run() async throws {
            try await runTool {
                if !postgres.isEmpty {
                    guard against == nil else { throw ToolError.usage("--against does not apply with --postgres") }
                    let server = try ServerStoreAccess.postgres(urls: postgres, store: options.store)
                    defer { server.close() }
                    let verification = try await Inspect.verify(server: server)
                    guard Inspect.printServerVerification(verification, format: format.resolved, output: .standard)
                    else {
                        throw ExitCode(1)
                    }
                    return
                }
                let store = try StoreAccess.openReadOnly(options.store)
                let bar = ProgressBar("verify")
                let other = try against.map { try StoreAccess.openReadOnly($0) }
                let verification = try Inspect.verify(store: store, against: other) {
                    bar.update($0.processed, of: $0.total)
                }
                bar.finish()
                let consistent = Inspect.printVerification(
                    verification.report, snapshotHead: verification.snapshotHead, format: format.resolved,
                    output: .standard)
                if !consistent { throw ExitCode(1) }
            }
        }
    }
}
