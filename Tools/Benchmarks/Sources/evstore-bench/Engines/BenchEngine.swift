/// One engine under test. Each method is one scenario, run in its own child process; it returns
/// the figures it measured (events/s, milliseconds, MiB).
protocol BenchEngine {
    init(context: BenchContext)

    /// 1. The whole workload, 1,000 events per transaction, into a new store.
    func append(mode: Mode) throws -> ChildResult
    /// 2. The first `count` events, one commit each (or `--group` events per commit), into a new store.
    func single(mode: Mode, count: Int) throws -> ChildResult
    /// 3. `writers` threads, each appending its share of events one commit at a time (durable).
    func concurrent(writers: Int, perWriter: Int) throws -> ChildResult
    /// 4. Whole-word, prefix and phrase queries against the store of scenario 1.
    func search(exact: [SearchCase], prefix: [SearchCase], phrases: [SearchCase]) throws -> ChildResult
    /// 6. Point reads of items, and a full log scan, on the store of scenario 1.
    func reads(ids: [String]) throws -> ChildResult
    /// 5. Rebuild of items (and the search index) from the log of the store of scenario 1.
    func rebuild() throws -> ChildResult
    /// 7. The size on disk of the store of scenario 1.
    func size() throws -> ChildResult
}

extension BenchEngine {
    func search(exact: [SearchCase], prefix: [SearchCase], phrases: [SearchCase]) throws -> ChildResult {
        ChildResult()
    }
}

/// Search latencies of one query set, as figures.
struct SearchFigures {
    var latencies = LatencySamples()
    var queriesWithHits = 0
    var results = 0

    mutating func record(nanoseconds: UInt64, results count: Int) {
        latencies.record(nanoseconds)
        if count > 0 { queriesWithHits += 1 }
        results += count
    }

    func write(_ name: String, into result: inout ChildResult) {
        let count = max(latencies.samples.count, 1)
        result.figures["search.\(name).p50"] = latencies.percentile(50)
        result.figures["search.\(name).p99"] = latencies.percentile(99)
        result.figures["search.\(name).qps"] = Double(latencies.samples.count) / max(latencies.totalSeconds, 1e-9)
        result.figures["search.\(name).hits"] = Double(queriesWithHits)
        result.figures["search.\(name).results"] = Double(results) / Double(count)
    }
}

/// What a set of queries matched, in full (every match, not a page): the number of matches and
/// an order-independent digest of (query, item id) pairs, 52 bits so that it is exact as a
/// figure. Two engines with the same figures matched the same items for every query.
struct MatchDigest {
    var matches = 0
    private var sum: UInt64 = 0

    mutating func add(query: Int, id: String) {
        var hash = FNV1a()
        hash.add(String(query) + "\u{0}" + id)
        sum &+= hash.value
        matches += 1
    }

    func write(_ name: String, into result: inout ChildResult) {
        result.figures["search.\(name).matches"] = Double(matches)
        result.figures["search.\(name).digest"] = Double(sum & 0xF_FFFF_FFFF_FFFF)
    }
}

/// Runs `search` over `cases`: a warm-up pass over the first 100 queries, then every query timed.
func measureSearches(_ cases: [SearchCase], _ search: (SearchCase) throws -> Int) throws -> SearchFigures {
    for query in cases.prefix(100) { _ = try search(query) }
    var figures = SearchFigures()
    for query in cases {
        let start = monotonicNanoseconds()
        let count = try search(query)
        figures.record(nanoseconds: monotonicNanoseconds() - start, results: count)
    }
    return figures
}
