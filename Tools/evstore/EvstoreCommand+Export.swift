import ArgumentParser
import EvstoreKit

extension EvstoreCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export the log as JSON Lines (one event a line, in log order).",
            discussion: """
                Each line is the canonical event JSON (origin, clock stamp and base kept), so \
                `export | import` into a new store reproduces identical items.

                Examples:
                  evstore export ./store > events.jsonl
                  evstore export ./old | evstore import ./new -
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: ArgumentHelp("The first seq.", valueName: "seq")) var from: UInt64 = 1
        @Option(help: ArgumentHelp("The last seq (default: the head).", valueName: "seq")) var to: UInt64?

        func validate() throws {
            if let to, from > to { throw ValidationError("--from \(from) is after --to \(to)") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try Transfer.export(from: store, from: from, to: to ?? .max, output: .standard)
            }
        }
    }
}
