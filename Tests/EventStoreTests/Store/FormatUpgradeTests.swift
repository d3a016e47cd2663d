import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// A store of an older format is upgraded by its first writable open: the databases the current
/// format no longer has are dropped and the projections rebuilt from the log. Format 1 kept the
/// search index in per-term duplicate-sorted trees; format 2 kept each item's doc id, the dead
/// documents and the collection totals in tables of their own.
struct FormatUpgradeTests {
    /// Turns a current store into what an older format left on disk: the format entry and the
    /// old search databases (with entries), the current ones empty.
    private func downgrade(_ path: String, to format: UInt64) throws {
        let environment = try Environment.open(path: path)
        try environment.write { tx in
            let meta = try tx.openDatabase(named: "meta", options: [])
            try tx.put(withUnsafeBytes(of: format.bigEndian, Array.init), forKey: Array("store.format".utf8), in: meta)
            for generation in 0..<2 {
                for name in ProjectionDatabases.formerNames {
                    let options: DatabaseOptions =
                        name == "search_postings" ? [.create, .duplicateSort, .duplicateFixed] : [.create]
                    let database = try tx.openDatabase(named: "g\(generation).\(name)", options: options)
                    try tx.put(Array(repeating: 7, count: 8), forKey: Array("old".utf8), in: database)
                }
                for name in ["search_documents", "search_segments"] {
                    try tx.removeAll(in: try tx.openDatabase(named: "g\(generation).\(name)", options: []))
                }
                try tx.delete(SegmentDirectory.key, in: try tx.openDatabase(named: "g\(generation).state", options: []))
            }
        }
    }

    @Test(arguments: [UInt64(1), 2])
    func anOlderStoreIsUpgradedByItsFirstWritableOpen(format: UInt64) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var store = try Store.open(at: directory.path)
        try await store.append(
            (0..<40).map { .put("notes", id: "n\($0)", fields: ["title": .string("upgrade note \($0)")]) })
        let head = try store.head()
        store.close()
        try downgrade(directory.path, to: format)

        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        do {
            _ = try Store.open(at: directory.path, configuration: readOnly)
            Issue.record("a read-only open of a format-\(format) store must fail")
        } catch let error as EventStoreError {
            #expect(error.code == .unsupportedFormat)
            #expect(error.message.contains("open it for writing once"), "\(error.message)")
        }

        store = try Store.open(at: directory.path)
        defer { store.close() }
        #expect(try store.head() == head, "the log is untouched")
        #expect(
            try store.read { try $0.metadata(forKey: "store.format") }
                == withUnsafeBytes(of: Meta.currentFormat.bigEndian, Array.init))
        #expect(try store.search("upgrade", limit: 100).count == 40, "the index was rebuilt")
        try store.environment.read { tx in
            for generation in 0..<2 {
                for name in ProjectionDatabases.formerNames {
                    #expect(throws: LMDBError.self, "g\(generation).\(name) was dropped") {
                        _ = try tx.openDatabase(named: "g\(generation).\(name)")
                    }
                }
            }
        }
        let report = try store.verify()
        #expect(report.isConsistent, "\(report.problems)")
        try await store.put("notes", id: "after", fields: ["title": "upgrade done"])
        #expect(try store.search("done").map(\.item.id) == ["after"])
    }

    /// Sets the format to 4 and writes every term of the active segments under a key of its own.
    private static func splitIntoSingleTermEntries(_ path: String) throws -> Int {
        let environment = try Environment.open(path: path)
        return try environment.write { tx in
            let meta = try tx.openDatabase(named: "meta", options: [])
            try tx.put(
                withUnsafeBytes(of: UInt64(4).bigEndian, Array.init), forKey: Array("store.format".utf8), in: meta)
            let database = try tx.openDatabase(named: "g0.search_segments", options: [])
            var single: [([UInt8], [UInt8])] = []
            try tx.forEach(in: database) { key, value in
                try SegmentEntry.forEachTerm(first: UnsafeRawBufferPointer(rebasing: key[4...]), value: value) {
                    term, list in
                    single.append((Array(key.prefix(4)) + Array(term), Array(list)))
                    return true
                }
                return true
            }
            try tx.removeAll(in: database)
            for (key, list) in single { try tx.put(list, forKey: key, in: database) }
            return single.count
        }
    }

    /// Format 4 wrote one `search_segments` entry per term, which format 5 reads as an entry of
    /// one term: its first writable open only records the new format, without a rebuild, and
    /// later merges combine its entries with blocks.
    @Test func aFormat4StoreIsReadAsItIsAndMergedIntoBlocks() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var store = try Store.open(at: directory.path)
        for batch in 0..<3 {
            try await store.append(
                (0..<40).map {
                    .put(
                        "notes", id: "n\(batch)-\($0)", fields: ["title": .string("upgrade note w\($0 % 7) b\(batch)")])
                })
        }
        let hits = try store.search("note", limit: 200).map(\.item.id)
        store.close()
        // What format 4 left on disk: each term's list under a key of its own.
        let entries = try Self.splitIntoSingleTermEntries(directory.path)
        #expect(entries > 20)

        // A read-only open reads it as it is.
        var readOnly = Store.Configuration()
        readOnly.readOnly = true
        let reader = try Store.open(at: directory.path, configuration: readOnly)
        #expect(try reader.search("note", limit: 200).map(\.item.id) == hits)
        #expect(
            try reader.read { try $0.metadata(forKey: "store.format") }
                == withUnsafeBytes(of: UInt64(4).bigEndian, Array.init))
        reader.close()

        store = try Store.open(at: directory.path)
        defer { store.close() }
        #expect(
            try store.read { try $0.metadata(forKey: "store.format") }
                == withUnsafeBytes(of: Meta.currentFormat.bigEndian, Array.init))
        #expect(!store.isRebuilding, "no rebuild")
        #expect(try store.read { try $0.metadata(forKey: "store.rebuild-needed") } == nil)
        #expect(try store.search("note", limit: 200).map(\.item.id) == hits)
        #expect(try store.verify().isConsistent)
        // Enough writes for merges to combine the format-4 entries with new blocks.
        for batch in 3..<40 {
            try await store.append(
                (0..<40).map {
                    .put(
                        "notes", id: "n\(batch % 5)-\($0)",
                        fields: ["title": .string("upgrade note w\($0 % 7) b\(batch)")])
                })
            store.mergeAhead?.settle()
        }
        let directoryNow = try store.read { reader in
            try SegmentDirectory.load(tx: reader.tx, state: try reader.projection.state)
        }
        #expect(directoryNow.segments.count < 40, "segments were merged")
        #expect(try store.search("note", limit: 500).count == 200)
        #expect(try store.search("b39", limit: 500).count == 40)
        let report = try store.verify()
        #expect(report.isConsistent, "\(report.problems)")
    }
    /// Format 6 differs only in never naming a search merge by a token (directory format 4): a
    /// read-only open reads it as it is, and its first writable open records format 7 without a
    /// rebuild, with its declared indexes' runs and its search index as they were.
    @Test func aFormat6StoreOnlyRecordsTheNewFormat() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Store.Configuration()
        configuration.indexes = [IndexDefinition("notes", fields: ["rank"])]
        var store = try Store.open(at: directory.path, configuration: configuration)
        try await store.append(
            (0..<300).map {
                .put("notes", id: "n\($0)", fields: ["title": "six note w\($0 % 9)", "rank": .int($0 % 17)])
            })
        let hits = try store.search("note", limit: 500).map(\.item.id)
        let ranked = try store.query(Query("notes").filter(.equal("rank", 3))).items.map(\.id)
        store.close()
        // What format 6 left: the same, under its format number.
        try Environment.open(path: directory.path).write { tx in
            let meta = try tx.openDatabase(named: "meta", options: [])
            try tx.put(
                withUnsafeBytes(of: UInt64(6).bigEndian, Array.init), forKey: Array("store.format".utf8), in: meta)
        }

        var readOnly = configuration
        readOnly.readOnly = true
        let reader = try Store.open(at: directory.path, configuration: readOnly)
        #expect(try reader.search("note", limit: 500).map(\.item.id) == hits)
        #expect(try reader.query(Query("notes").filter(.equal("rank", 3))).items.map(\.id) == ranked)
        reader.close()

        store = try Store.open(at: directory.path, configuration: configuration)
        defer { store.close() }
        #expect(
            try store.read { try $0.metadata(forKey: "store.format") }
                == withUnsafeBytes(of: Meta.currentFormat.bigEndian, Array.init))
        #expect(!store.isRebuilding, "no rebuild")
        let rebuildNeeded = try store.read { try $0.metadata(forKey: "store.rebuild-needed") }
        #expect(rebuildNeeded == nil)
        #expect(try store.search("note", limit: 500).map(\.item.id) == hits)
        #expect(try store.query(Query("notes").filter(.equal("rank", 3))).items.map(\.id) == ranked)
        #expect(try store.verify().isConsistent)
    }
}
