import Foundation

/// `evstore-bench`: EventStore against SQLite (GRDB, FTS5) and raw LMDB on one deterministic
/// workload. See Tools/Benchmarks/README.md.
@main
struct EvstoreBench {
    static func main() {
        do {
            let options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
            if let task = options.child {
                try ChildRunner.run(options, task: task)
            } else {
                try Orchestrator(options: options).run()
            }
        } catch {
            log("evstore-bench: \(error)")
            exit(1)
        }
    }
}
