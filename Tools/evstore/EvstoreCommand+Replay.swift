import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the items as they were at a seq or a clock stamp.",
            discussion: """
                Examples:
                  evstore replay ./store --to 120
                  evstore replay ./store --at 117964800000000000 --collection notes
                  evstore replay ./store --to 120 --item notes/n1 --step
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "Replay the events up to this seq.") var to: UInt64?
        @Option(help: "Replay the events stamped at or before this HLC (its decimal raw value).") var at: UInt64?
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: "Only this item: ID with --collection, or COLLECTION/ID.") var item: String?
        @Flag(help: "With --item: print each event and the change it made.") var step = false
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if to != nil && at != nil { throw ValidationError("give --to or --at, not both") }
            if step && item == nil { throw ValidationError("--step needs --item") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let point: ReplayPoint = at.map { .hlc(HLCTimestamp(rawValue: $0)) } ?? .seq(to ?? .max)
                try Inspect.replay(
                    store: store, point: point, collection: collection, item: item, step: step, format: format.resolved,
                    output: .standard)
            }
        }
    }
}
