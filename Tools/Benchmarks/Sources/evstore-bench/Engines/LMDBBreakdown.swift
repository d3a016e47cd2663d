import Foundation
import LMDB

/// Size diagnostics of an LMDB environment (an EventStore store or the raw LMDB store), opened
/// read-only with the `LMDB` module while no store has it open in this process.
enum LMDBBreakdown {
    /// The bytes of each named database's pages, plus `(free and meta pages)` for the rest of
    /// the file: pages LMDB keeps for reuse after copy-on-write.
    static func databases(at path: String) throws -> [(String, Int)] {
        let environment = try open(path)
        var sizes: [(String, Int)] = []
        try environment.read { tx in
            var names: [String] = []
            try tx.forEach(in: try tx.openMainDatabase()) { key, _ in
                names.append(String(decoding: key, as: UTF8.self))
                return true
            }
            for name in names {
                let statistics = try tx.statistics(of: try tx.openDatabase(named: name))
                if statistics.bytes > 0 { sizes.append((name, statistics.bytes)) }
            }
        }
        let used = sizes.reduce(0) { $0 + $1.1 }
        sizes.sort { $0.1 > $1.1 }
        sizes.append(("(free and meta pages)", max(0, fileSize(path + "/data.mdb") - used)))
        return sizes
    }

    /// The size in MiB of a compacted copy (`mdb_env_copy2` with `MDB_CP_COMPACT`): the file
    /// without free pages.
    static func compactedSize(_ path: String) throws -> Double {
        let environment = try open(path)
        let copy = path + ".compacted"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try environment.copy(to: copy, compact: true)
        return Double(fileSize(copy + "/data.mdb")) / 1_048_576
    }

    private static func open(_ path: String) throws -> Environment {
        var configuration = Environment.Configuration()
        configuration.readOnly = true
        configuration.maxDatabases = 64
        return try Environment.open(path: path, configuration: configuration)
    }
}

/// See ``LMDBBreakdown/compactedSize(_:)``.
func compactedSize(_ path: String) throws -> Double? {
    try LMDBBreakdown.compactedSize(path)
}
