import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the offline full-text index.",
            discussion: """
                All words must match; the last one also as a prefix. With --snippets, each result
                shows where its fields matched (in --format jsonl: the snippet, the matched ranges
                as UTF-8 byte offsets, and the marked text); with --facets, the values of those
                fields are counted over every hit, and a last line (jsonl) gives them with the total.

                Examples:
                  evstore search ./store "sync design" --collection notes --snippets
                  evstore search ./store 동기화 --tag work --limit 5
                  evstore search ./store sync --facets tags,folder --where 'folder == work'
                  evstore search ./store synchroniztion --typos on
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The query.") var query: String
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: ArgumentHelp("Only items with this tag (repeatable).", valueName: "tag")) var tag: [String] = []
        @Option(help: ArgumentHelp("The most results.", valueName: "n")) var limit = 20
        @Option(help: ArgumentHelp("Skip this many results.", valueName: "n")) var offset = 0
        @Option(
            name: .customLong("where"),
            help: ArgumentHelp(
                "Only items that match FIELD OP VALUE (repeatable; as in evstore query).", valueName: "filter"))
        var filters: [String] = []
        @Flag(help: "Show where each result matched: a snippet per field, the matches marked.") var snippets = false
        @Option(help: ArgumentHelp("The most words of a snippet (0: the whole field).", valueName: "n"))
        var snippetWords = 16
        @Option(
            help: ArgumentHelp(
                "Count the values of these fields over every hit (comma-separated, repeatable).", valueName: "fields"))
        var facets: [String] = []
        @Option(
            help: ArgumentHelp(
                "Typo tolerance: auto (only when the words as written find nothing), on, off.", valueName: "mode"))
        var typos = "auto"
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if limit < 1 { throw ValidationError("--limit must be at least 1") }
            if offset < 0 { throw ValidationError("--offset must not be negative") }
            if snippetWords < 0 { throw ValidationError("--snippet-words must not be negative") }
            if tolerance == nil { throw ValidationError("--typos must be auto, on or off") }
        }

        /// `--typos` as a tolerance.
        var tolerance: TypoTolerance? {
            switch typos {
            case "auto": .automatic
            case "on": .always
            case "off": .off
            default: nil
            }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let fields = facets.flatMap {
                    $0.split(separator: ",").map {
                        String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
                    }
                }
                let conditions = try filters.map(QueryItems.filter)
                let page = try store.searchPage(
                    SearchQuery(
                        query, collection: collection, tags: tag, limit: limit, offset: offset,
                        filter: conditions.isEmpty ? nil : conditions.count == 1 ? conditions[0] : .and(conditions),
                        facets: fields.filter { !$0.isEmpty },
                        highlights: snippets ? HighlightOptions(snippetWords: snippetWords) : nil,
                        typos: tolerance ?? .automatic))
                Inspect.printSearch(page, facets: !fields.isEmpty, format: format.resolved, output: .standard)
            }
        }
    }
}
