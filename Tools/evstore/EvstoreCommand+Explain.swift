import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show every write to an item's fields, which one won, and why.",
            discussion: """
                Like `git blame` for a field: each write with its seq, clock stamp, origin \
                replica, operation and value, oldest first; ✔ marks the write the field holds, and \
                each line says what beat the others (a later write, or a concurrent one: a conflict).

                Examples:
                  evstore explain ./store --item notes/n1
                  evstore explain ./store --item n1 --collection notes --field title --format jsonl
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The item: ID with --collection, or COLLECTION/ID.") var item: String
        @Option(help: "The item's collection.") var collection: String?
        @Option(help: "Only this field.") var field: String?
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try Inspect.explain(
                    store: store, collection: collection, item: item, field: field, format: format.resolved,
                    output: .standard)
            }
        }
    }
}
