extension Orchestrator {
    /// The figures of the `queries` scenario that compare its tasks: each engine's slowdown of
    /// the batched append with one and with all declared indexes, against none (percent), and
    /// bytes written per event. Fails when EventStore and SQLite answered a query or a page with
    /// different ids.
    static func deriveQueryFigures(_ results: inout Results, events: Int) throws {
        let all = QuerySuite.indexes.count
        for engine in [EngineName.eventstore, .sqlite] {
            for indexes in [0, 1, all] {
                // A child that appends more than the tasks (EventStore's typed append, without
                // indexes) reports the tasks' own bytes.
                if let bytes = results["tasks.wchar.idx\(indexes)", engine]
                    ?? results["io.queries.idx\(indexes).wchar", engine]
                {
                    results["written.tasks.idx\(indexes)", engine] = bytes / Double(events) / 1024
                }
            }
            guard let none = results["tasks.append.idx0", engine], none > 0 else { continue }
            for indexes in [1, all] {
                if let rate = results["tasks.append.idx\(indexes)", engine] {
                    results["tasks.slowdown.idx\(indexes)", engine] = (1 - rate / none) * 100
                }
            }
        }
        for note in ["answers", "paging"] {
            let key = "queries.durable.\(note)"
            guard let ours = results.notes[.eventstore]?[key], let theirs = results.notes[.sqlite]?[key] else {
                continue
            }
            guard ours == theirs else {
                throw BenchError(
                    "EventStore and SQLite returned different ids (\(note == "answers" ? "top-50 queries" : "keyset paging")): "
                        + "checksum \(ours) against \(theirs)")
            }
        }
    }
}
