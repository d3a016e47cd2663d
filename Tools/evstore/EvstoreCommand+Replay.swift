import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the items as they were at a seq or a clock stamp.",
            discussion: """
                Replays the log into a scratch copy up to the point and prints the items then. \
                With --step, prints each event and what it did to each field \
                (title: "a" → "b", or title: lost to <event>).

                Examples:
                  evstore replay ./store --to 120
                  evstore replay ./store --at 2026-11-22T10:39:41.595Z+1 --collection notes
                  evstore replay ./store --to 120 --item notes/n1 --step
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: ArgumentHelp("Replay the events up to this seq (default: all).", valueName: "seq")) var to:
            UInt64?
        @Option(
            help: ArgumentHelp(
                "Replay the events stamped at or before this clock stamp.",
                discussion: "As printed (2026-11-22T10:39:41.595Z+1) or its decimal raw value.",
                valueName: "hlc"))
        var at: String?
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: "Only this item: ID with --collection, or COLLECTION/ID.") var item: String?
        @Flag(help: "Print each event and the change it made to each field.") var step = false
        @Option(help: ArgumentHelp("The most items (or events, with --step) to print.", valueName: "n")) var limit: Int?
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if to != nil && at != nil { throw ValidationError("give --to or --at, not both") }
            if let at, ClockArgument.parse(at) == nil {
                throw ValidationError(
                    "--at \(at) is not a clock stamp (e.g. 2026-11-22T10:39:41.595Z+1 or 117659663177809921)")
            }
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let point: ReplayPoint = at.flatMap(ClockArgument.parse).map { .hlc($0) } ?? .seq(to ?? .max)
                var request = Inspect.ReplayRequest(point: point)
                request.collection = collection
                request.item = item
                request.step = step
                request.limit = limit ?? .max
                request.format = format.resolved
                try Inspect.replay(store: store, request, output: .standard)
            }
        }
    }
}
