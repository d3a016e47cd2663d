import ArgumentParser

/// `evstore-bench`: EventStore against SQLite (GRDB, FTS5) and raw LMDB on one deterministic
/// workload. See Tools/Benchmarks/README.md and ``BenchCommand``.
@main
struct EvstoreBench {
    static func main() {
        BenchCommand.main()
    }
}
