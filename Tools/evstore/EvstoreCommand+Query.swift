import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct QueryCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "query",
            abstract: "Answer a filtered, sorted query from the store's declared indexes.",
            discussion: """
                Read-only; works while an application writes the store. Filters are FIELD OP VALUE \
                with OP one of == != < <= > >= in between prefix, or FIELD is-missing; a value is \
                JSON when it parses (3, true, null, "a b", [1,2]), else a string. A query that no \
                declared index serves fails and names the index to declare (evstore index), unless \
                --scan is given. With --format jsonl, a last line {"cursor": …} holds the cursor of \
                the next page (pass it to --after); a table ends with "next page: --after …".

                Examples:
                  evstore query ./store --collection tasks --where 'done == false' --sort due --limit 20
                  evstore query ./store --collection notes --where 'folder == work' --sort updatedAt:desc --format jsonl
                  evstore query ./store --collection tasks --where 'due < 1800000000' --count
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The collection to query.") var collection: String
        @Option(
            name: .customLong("where"),
            help: ArgumentHelp("A filter, FIELD OP VALUE (repeatable; all must hold).", valueName: "filter"))
        var filters: [String] = []
        @Option(help: ArgumentHelp("A sort field, FIELD or FIELD:desc (repeatable).", valueName: "field"))
        var sort: [String] = []
        @Option(help: ArgumentHelp("The most items to print.", valueName: "n")) var limit: Int?
        @Option(help: ArgumentHelp("Continue after this cursor (from a previous page).", valueName: "cursor"))
        var after: String?
        @Flag(help: "Print the number of matching items.") var count = false
        @Flag(help: "Read every item when no declared index serves the query.") var scan = false
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                var query = QueryItems(collection: collection)
                query.filters = filters
                query.sorts = sort
                query.limit = limit
                query.after = after
                query.count = count
                query.allowsScan = scan
                query.format = format.resolved
                try query.run(store: store, output: .standard)
            }
        }
    }

    struct Index: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Declare an index on an existing store and build it from the items.",
            discussion: """
                Opens the store for writing (while no application writes it), records the index \
                with the store's configuration and builds it in one transaction. Every later writer \
                maintains it, evstore query and the application's queries use it, and \
                evstore dump --meta lists it.

                Example:
                  evstore index ./store --collection tasks --fields done,due
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The collection to index.") var collection: String
        @Option(help: ArgumentHelp("The indexed fields, most significant first, comma-separated.", valueName: "F,G"))
        var fields: String

        func run() async throws {
            try await runTool {
                let index = IndexDefinition(collection, fields: fields.split(separator: ",").map(String.init))
                try DeclareIndex.run(path: options.store, index: index, output: .standard)
            }
        }
    }
}
