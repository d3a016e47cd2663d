import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sync a store with a sync server once, and print what moved.",
            discussion: """
                Example:
                  evstore sync ./phone --remote http://127.0.0.1:8080 --token secret --store-name notes
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The server's base URL.") var remote: String
        @Option(help: "The bearer token.") var token: String?
        @Option(help: "The store's name on the server (default: the directory's name).") var storeName: String?
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openWritable(options.store, create: true)
                let name = storeName ?? URL(fileURLWithPath: options.store).lastPathComponent
                let synchronizer = Synchronizer(
                    store: store, transport: HTTPTransport(baseURL: remote, token: token, storeName: name))
                let report = try await synchronizer.sync()
                switch format.resolved {
                case .jsonl:
                    print(Rendering.jsonLine([
                        "pushed": .int(Int64(report.pushed)), "pulled": .int(Int64(report.pulled)),
                        "duplicates": .int(Int64(report.duplicates)), "conflicts": .int(Int64(report.conflicts)),
                        "server_head": .int(Int64(report.serverHead)), "epoch_changed": .bool(report.epochChanged),
                    ]))
                case .table:
                    print("pushed \(report.pushed), pulled \(report.pulled), duplicates \(report.duplicates), conflicts \(report.conflicts)")
                    for record in report.conflictRecords.prefix(20) {
                        print("  conflict \(record.collection)/\(record.item).\(record.field): \(Rendering.text(record.winner.value)) won over \(Rendering.text(record.loser.value))")
                    }
                }
            }
        }
    }
}
