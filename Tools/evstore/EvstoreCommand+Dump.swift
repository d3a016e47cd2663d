import ArgumentParser
import EvstoreKit

extension EvstoreCommand {
    struct Dump: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print events, items, search terms, conflicts or metadata.",
            discussion: """
                Examples:
                  evstore dump ./store                          # events, in log order
                  evstore dump ./store --items --collection notes
                  evstore dump ./store --events --from 100 --to 200 --format jsonl
                  evstore dump ./store --conflicts --item notes/n1
                """)

        @OptionGroup var options: StoreOptions
        @Flag(help: "What to print (default: --events).")
        var section: SectionFlag = .events
        @Option(help: "The first seq (events).") var from: UInt64 = 1
        @Option(help: "The last seq (events).") var to: UInt64 = .max
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: "Only this item: ID with --collection, or COLLECTION/ID.") var item: String?
        @Option(help: "Only events from this origin replica (id or prefix).") var origin: String?
        @Option(help: "The most records to print.") var limit: Int?
        @OptionGroup var format: FormatOptions

        enum SectionFlag: String, EnumerableFlag {
            case events, items, terms, conflicts, meta
        }

        func validate() throws {
            if from > to { throw ValidationError("--from \(from) is after --to \(to)") }
            if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                var dump = EvstoreKit.Dump()
                dump.section = EvstoreKit.Dump.Section(rawValue: section.rawValue)!
                dump.from = from
                dump.to = to
                dump.collection = collection
                dump.item = item
                dump.origin = origin
                dump.limit = limit ?? .max
                dump.format = format.resolved
                try dump.run(store: store, output: .standard)
            }
        }
    }
}
