import ArgumentParser
import EvstoreKit

extension EvstoreCommand {
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A short story: two offline replicas, a conflict, sync, search, explain.",
            discussion: """
                In one process: starts a sync server on a free loopback port, edits notes on a \
                "phone" and a "laptop" replica while they are offline (the same title on both), \
                syncs them, and shows the merged notes, the conflict and why it resolved so, \
                offline searches, and `explain` for the conflicted field. Takes about a second. \
                Re-runnable: each run starts from fresh replicas in the directory, which stays \
                for you to inspect.

                Examples:
                  evstore demo
                  evstore demo --dir /tmp/evstore-demo
                """)

        @Option(help: "Where the demo keeps its data (default: evstore-demo in the temporary directory).")
        var dir: String?

        func run() async throws {
            try await runTool {
                try await EvstoreKit.Demo(directory: dir ?? EvstoreKit.Demo.defaultDirectory).run(output: .standard)
            }
        }
    }
}
