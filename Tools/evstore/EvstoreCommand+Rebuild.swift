import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild items, history, conflicts and the search index from the log.",
            discussion: """
                The store's own recorded configuration (search fields, weights) is used. Custom
                projections of the application are not known to evstore: they are named as skipped,
                and the application rebuilds them when it next opens the store.

                Example:
                  evstore rebuild ./store
                """)

        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openWritable(options.store)
                let bar = ProgressBar("rebuild")
                let rebuild = try await Inspect.rebuild(store: store) { bar.update($0.processed, of: $0.total) }
                bar.finish()
                Inspect.printRebuild(rebuild, output: .standard)
            }
        }
    }
}
