import ArgumentParser
import EvstoreKit

extension EvstoreCommand {
    struct Dump: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print events, items, search terms, conflicts or metadata.",
            discussion: """
                --events: the log in seq order. --items: the current items. --terms: the search \
                index's terms and how many items hold each (tags as #tag). --conflicts: concurrent \
                writes that lost, and what beat them. --meta: replica id, clock, format version, \
                projection generation and checkpoint, sync cursors and epochs.

                Examples:
                  evstore dump ./store                          # events, in log order
                  evstore dump ./store --items --collection notes
                  evstore dump ./store --events --from 100 --to 200 --format jsonl
                  evstore dump ./store --conflicts --item notes/n1
                  evstore dump notes --postgres postgres://evstore@db/evstore --events

                With --postgres URL, STORE is the name of a store that sync servers keep in that \
                PostgreSQL database; that backend keeps the log only, so --events and --meta work \
                on it (read through the sync service) and the other sections do not.
                """)

        @OptionGroup var options: StoreOptions
        @Flag(help: "What to print.")
        var section: SectionFlag = .events
        @Option(help: ArgumentHelp("The first seq (events; conflicts: the seq that revealed them).", valueName: "seq"))
        var from: UInt64 = 1
        @Option(help: ArgumentHelp("The last seq (events, conflicts; default: the head).", valueName: "seq")) var to:
            UInt64?
        @Option(help: "Only this collection (events, items, terms, conflicts).") var collection: String?
        @Option(help: "Only this item: ID with --collection, or COLLECTION/ID (events, items, conflicts).") var item:
            String?
        @Option(
            help: ArgumentHelp(
                "Only events (or conflicts with a write) from this origin replica (its id or a prefix).",
                valueName: "replica"))
        var origin: String?
        @Option(help: ArgumentHelp("The most records to print.", valueName: "n")) var limit: Int?
        @OptionGroup var format: FormatOptions
        @Option(
            help: ArgumentHelp(
                "A sync server's PostgreSQL database; STORE is then a store's name there (repeat, in the deployment's "
                    + "order, for stores spread over several databases).", valueName: "url"))
        var postgres: [String] = []

        enum SectionFlag: String, EnumerableFlag {
            case events, items, terms, conflicts, meta
        }

        func validate() throws {
            if let to, from > to { throw ValidationError("--from \(from) is after --to \(to)") }
            if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        }

        func run() async throws {
            try await runTool {
                var dump = EvstoreKit.Dump()
                dump.section = EvstoreKit.Dump.Section(rawValue: section.rawValue)!
                dump.from = from
                dump.to = to ?? .max
                dump.collection = collection
                dump.item = item
                dump.origin = origin
                dump.limit = limit ?? .max
                dump.format = format.resolved
                if !postgres.isEmpty {
                    let server = try ServerStoreAccess.postgres(urls: postgres, store: options.store)
                    defer { server.close() }
                    try await dump.run(server: server, output: .standard)
                } else {
                    try dump.run(store: try StoreAccess.openReadOnly(options.store), output: .standard)
                }
            }
        }
    }
}
