import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A short story: two offline replicas, a conflict, sync, search, explain.",
            discussion: """
                Starts a sync server on a free loopback port, edits notes on a "phone" and a
                "laptop" replica while offline, syncs them and shows the result. Re-runnable: each run
                starts from fresh replicas in the directory.

                Example:
                  evstore demo --dir /tmp/evstore-demo
                """)

        @Option(help: "Where the demo keeps its data (default: ~/.evstore/demo).") var dir: String?

        func run() async throws {
            try await runTool {
                try await EvstoreKit.Demo(directory: dir ?? EvstoreKit.Demo.defaultDirectory).run(output: .standard)
            }
        }
    }
}
