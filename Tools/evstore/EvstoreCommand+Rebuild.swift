import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild items, history, conflicts and the search index from the log.",
            discussion: "Example:\n  evstore rebuild ./store")

        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openWritable(options.store)
                let bar = ProgressBar("rebuild")
                try await store.rebuildProjections { bar.update($0.processed, of: $0.total) }
                bar.finish()
                print("rebuilt the projections from \(try store.head()) events")
            }
        }
    }
}
