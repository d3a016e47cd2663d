import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the log and compare every projection with a rebuild, byte for byte.",
            discussion: """
                Exit status 0 only when the log is sound and the projections equal a rebuild.

                Example:
                  evstore verify ./store
                """)

        @OptionGroup var options: StoreOptions
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let bar = ProgressBar("verify")
                let verification = try Inspect.verify(store: store) { bar.update($0.processed, of: $0.total) }
                bar.finish()
                let consistent = Inspect.printVerification(
                    verification.report, snapshotHead: verification.snapshotHead, format: format.resolved, output: .standard)
                if !consistent { throw ExitCode(1) }
            }
        }
    }
}
