import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Diff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare two replicas: items field by field, and the events each lacks.",
            discussion: """
                Opens both stores read-only. Exit status 0 when they hold the same events and \
                items, 1 when they differ.

                Example:
                  evstore diff ./phone ./laptop
                """)

        @Argument(help: "The first store (A).") var storeA: String
        @Argument(help: "The second store (B).") var storeB: String
        @Option(help: ArgumentHelp("The most differences of each kind to print in a table.", valueName: "n"))
        var limit = 50
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            try await runTool {
                let a = try StoreAccess.openReadOnly(storeA)
                let b = try StoreAccess.openReadOnly(storeB)
                let result = try Inspect.diff(a, b)
                Inspect.printDiff(
                    result, labels: (storeA, storeB), limit: limit, format: format.resolved, output: .standard)
                if !result.isEqual { throw ExitCode(1) }
            }
        }
    }
}
