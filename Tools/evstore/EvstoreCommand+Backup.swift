import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a compacted, consistent copy of a live store.",
            discussion: "Example:\n  evstore backup ./store ./backups/2026-11-22")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The destination: a new or empty directory.") var destination: String

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try store.backup(to: destination)
                print("backed up \(try store.head()) events to \(destination)")
            }
        }
    }
}
