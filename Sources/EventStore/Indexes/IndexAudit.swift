import LMDB

/// Compares two generations' declared indexes by what they hold, not by their bytes: run
/// boundaries depend on how commits were grouped, so a live index and a rebuild of it differ
/// in bytes while holding the same live entries.
///
/// Compared: the live entries of every index, in key order. Checked on the live side: every key
/// of `indexes` belongs to a run of the directory or to the output of its merge under way.
struct IndexAudit {
    /// The database name this audit replaces in the byte-for-byte comparison.
    static let databaseName = "indexes"

    let live: (tx: ReadTransaction, databases: ProjectionDatabases)
    let rebuilt: (tx: ReadTransaction, databases: ProjectionDatabases)

    func compare(into report: inout VerificationReport) throws {
        do {
            try compareEntries(into: &report)
        } catch let error as EventStoreError where error.code == .corrupt {
            // A block that does not decode ends the comparison: it is the problem to report.
            report.record(
                .init(kind: "corrupt", database: IndexAudit.databaseName, key: "*", detail: error.message))
        }
        try checkRuns(into: &report)
    }

    private func compareEntries(into report: inout VerificationReport) throws {
        try IndexAudit.withLiveEntries(of: live) { left in
            try IndexAudit.withLiveEntries(of: rebuilt) { right in
                var liveKey = try left()
                var rebuiltKey = try right()
                while liveKey != nil || rebuiltKey != nil {
                    report.entriesCompared += 1
                    let order: Int
                    if let liveKey, let rebuiltKey {
                        order = liveKey.lexicographicallyPrecedes(rebuiltKey) ? -1 : (liveKey == rebuiltKey ? 0 : 1)
                    } else {
                        order = liveKey == nil ? 1 : -1
                    }
                    if order < 0, let key = liveKey {
                        report.record(
                            .init(
                                kind: "unexpected", database: IndexAudit.databaseName, key: key.withUnsafeBytes(hex),
                                detail: "not in a rebuild from the log"))
                        liveKey = try left()
                    } else if order > 0, let key = rebuiltKey {
                        report.record(
                            .init(
                                kind: "missing", database: IndexAudit.databaseName, key: key.withUnsafeBytes(hex),
                                detail: "a rebuild from the log has it"))
                        rebuiltKey = try right()
                    } else {
                        liveKey = try left()
                        rebuiltKey = try right()
                    }
                }
            }
        }
    }

    /// Reports keys of `indexes` that belong to no run of the directory.
    private func checkRuns(into report: inout VerificationReport) throws {
        guard let database = live.databases.indexes else { return }
        let directory = try IndexRunDirectory.load(tx: live.tx, state: live.databases.state)
        // The output of a merge under way is not read yet, but it is the directory's.
        let listed = Set(directory.runs.map(\.id) + (directory.merge.map { [$0.output] } ?? []))
        try live.tx.withCursor(on: database) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                guard current.key.count >= IndexRuns.prefixBytes else {
                    report.record(
                        .init(
                            kind: "unexpected", database: IndexAudit.databaseName, key: hex(current.key),
                            detail: "a key too short to name a run"))
                    entry = try cursor.next()
                    continue
                }
                let run = current.key.prefix(IndexRuns.prefixBytes).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                if !listed.contains(run) {
                    report.record(
                        .init(
                            kind: "unexpected", database: IndexAudit.databaseName, key: hex(current.key),
                            detail: "run \(run) is not in the index directory"))
                }
                // The next run's first key.
                guard let next = IndexKey.successor(of: IndexRuns.prefix(run)) else { return }
                entry = try cursor.seek(atLeast: next)
            }
        }
    }

    /// The live entry keys of a generation's indexes, in key order (for tests and tools).
    static func contents(tx: ReadTransaction, databases: ProjectionDatabases) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try withLiveEntries(of: (tx, databases)) { next in
            while let key = try next() { keys.append(key) }
        }
        return keys
    }

    /// Calls `body` with a function that returns the next live entry key of a generation's
    /// indexes (a copy), or `nil` after the last.
    private static func withLiveEntries(
        of side: (tx: ReadTransaction, databases: ProjectionDatabases),
        _ body: (() throws -> [UInt8]?) throws -> Void
    ) throws {
        guard let database = side.databases.indexes else { return try body { nil } }
        try IndexRunWalk.withWalk(overRunsListedIn: side.databases.state, in: database, tx: side.tx) { walk in
            try body {
                var found: [UInt8]?
                while found == nil, try walk.next({ key, live in if live { found = Array(key) } }) {}
                return found
            }
        }
    }
}
