import ArgumentParser
import EvstoreKit
import Foundation

extension EvstoreCommand {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import changes or events from JSON Lines.",
            discussion: """
                Each line is either a change, stamped now by this replica:
                  {"collection": "notes", "id": "n1", "op": "put", "fields": {"title": "Hi"}}
                ("op": put, patch or delete), or an event as `evstore export` writes it (origin and \
                clock stamp kept; events already in the log are skipped). Every line is checked \
                before anything is written. Creates the store when the directory is missing or empty.

                Examples:
                  evstore import ./store notes.jsonl
                  evstore export ./old | evstore import ./new -
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The JSON Lines file, or - for standard input.") var file: String

        func run() async throws {
            try await runTool {
                let data: Data
                if file == "-" {
                    data = FileHandle.standardInput.readDataToEndOfFile()
                } else {
                    guard let contents = FileManager.default.contents(atPath: file) else {
                        throw ToolError("cannot read \(file)")
                    }
                    data = contents
                }
                let (result, head) = try Transfer.importJSONLines(data, intoStoreAt: options.store)
                print(
                    "imported \(result.changes) changes and \(result.events) events (\(result.duplicates) already present); "
                        + "the log has \(head) events")
            }
        }
    }
}
