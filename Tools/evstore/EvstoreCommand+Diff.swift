import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Diff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare two replicas: items field by field, and the events each lacks.",
            discussion: """
                Exit status 0 when they are equal, 1 when they differ.

                Example:
                  evstore diff ./phone ./laptop
                """)

        @Argument(help: "The first store (A).") var storeA: String
        @Argument(help: "The second store (B).") var storeB: String
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let a = try StoreAccess.openReadOnly(storeA)
                let b = try StoreAccess.openReadOnly(storeB)
                let result = try Inspect.diff(a, b)
                Inspect.printDiff(result, format: format.resolved, output: .standard)
                if !result.isEqual { throw ExitCode(1) }
            }
        }
    }
}
