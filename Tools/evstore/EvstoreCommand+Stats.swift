import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Counts, sizes per named database, page statistics, map size and use.",
            discussion: "Example:\n  evstore stats ./store")

        @OptionGroup var options: StoreOptions
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                Inspect.printStatistics(try store.statistics(), format: format.resolved, output: .standard)
            }
        }
    }
}
