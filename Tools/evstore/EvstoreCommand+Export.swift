import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export the log as JSON Lines (one event a line, in log order).",
            discussion: "Example:\n  evstore export ./store > events.jsonl")

        @OptionGroup var options: StoreOptions
        @Option(help: "The first seq.") var from: UInt64 = 1
        @Option(help: "The last seq.") var to: UInt64 = .max

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try Transfer.export(from: store, from: from, to: to, output: .standard)
            }
        }
    }
}
