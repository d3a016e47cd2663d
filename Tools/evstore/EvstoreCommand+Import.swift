import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import changes or events from JSON Lines.",
            discussion: """
                Each line is a change stamped now by this replica:
                  {"collection": "notes", "id": "n1", "op": "put", "fields": {"title": "Hi"}}
                or an event as `evstore export` writes it (origin and clock stamp kept).
                Every line is checked before anything is written.

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
                    guard let contents = FileManager.default.contents(atPath: file) else { throw ToolError("cannot read \(file)") }
                    data = contents
                }
                let store = try StoreAccess.openWritable(options.store, create: true)
                let result = try Transfer.importLines(data, into: store)
                print("imported \(result.changes) changes and \(result.events) events (\(result.duplicates) already present)")
            }
        }
    }
}
