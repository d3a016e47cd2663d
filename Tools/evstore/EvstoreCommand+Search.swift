import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the offline full-text index.",
            discussion: """
                All words must match; the last one also as a prefix.

                Examples:
                  evstore search ./store "sync design" --collection notes
                  evstore search ./store 동기화 --tag work --limit 5
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The query.") var query: String
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: ArgumentHelp("Only items with this tag (repeatable).", valueName: "tag")) var tag: [String] = []
        @Option(help: ArgumentHelp("The most results.", valueName: "n")) var limit = 20
        @Option(help: ArgumentHelp("Skip this many results.", valueName: "n")) var offset = 0
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if limit < 1 { throw ValidationError("--limit must be at least 1") }
            if offset < 0 { throw ValidationError("--offset must not be negative") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let results = try store.search(SearchQuery(query, collection: collection, tags: tag, limit: limit, offset: offset))
                Inspect.printSearch(results, format: format.resolved, output: .standard)
            }
        }
    }
}
