import ArgumentParser
import EventStore
import EvstoreKit
import Foundation

extension EvstoreCommand {
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Counts, sizes per named database, page statistics, map size and use.",
            discussion: """
                The same numbers as `mdb_stat -a STORE`, with the store's own counts.

                Example:
                  evstore stats ./store
                """)

        @OptionGroup var options: StoreOptions
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let attributes = try? FileManager.default.attributesOfItem(atPath: options.store + "/data.mdb")
                let fileBytes = (attributes?[.size] as? NSNumber)?.intValue
                Inspect.printStatistics(
                    try store.statistics(), fileBytes: fileBytes, format: format.resolved, output: .standard)
            }
        }
    }
}
