import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// Declared indexes over a store's life: built when first declared on an existing store,
/// recorded, kept by opens that do not declare them, maintained by every writer, rebuilt,
/// verified, and changed only as ``Store/IndexChange`` says.
struct IndexLifecycleTests {
    static let byDue = IndexDefinition("tasks", fields: ["due"])
    static let byOwner = IndexDefinition("tasks", fields: ["owner", "due"])

    static func configuration(_ indexes: [IndexDefinition], _ change: Store.IndexChange = .build) -> Store.Configuration
    {
        var configuration = Store.Configuration()
        configuration.indexes = indexes
        configuration.indexChange = change
        return configuration
    }

    static func write(_ store: Store, count: Int = 30, from start: Int = 0) async throws {
        _ = try await store.append(
            (start..<start + count).map { number in
                .put(
                    "tasks", id: "t\(number)",
                    fields: ["due": .int(Int64(number % 11)), "owner": .string(number % 2 == 0 ? "ana" : "bo")])
            })
    }

    /// Creates a store at `path`, writes ``write(_:count:from:)``, runs `then` on it and closes it.
    static func makeStore(
        _ path: String, _ configuration: Store.Configuration = Store.Configuration(),
        then: (Store) throws -> Void = { _ in }
    ) async throws {
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        try await write(store)
        try then(store)
    }

    static func dueOrder(_ store: Store) throws -> [String] {
        try QueryReference.allPages(store, Query("tasks").sorted(by: "due").limit(7)).map(\.id)
    }

    static func expectedDueOrder(_ store: Store) throws -> [String] {
        QueryReference.answer(try QueryReference.allItems(store, "tasks"), filter: nil, order: [SortField("due")]).map(
            \.id)
    }

    static func indexEntries(_ store: Store) throws -> Int {
        try store.read { reader in try IndexAudit.contents(tx: reader.tx, databases: reader.projection).count }
    }

    @Test func declaringAnIndexOnAnExistingStoreBuildsIt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(directory.path) { store in
            #expect(throws: EventStoreError.self) { try Self.dueOrder(store) }
        }
        let store = try Store.open(at: directory.path, configuration: Self.configuration([Self.byDue]))
        defer { store.close() }
        #expect(store.configuration.indexes == [Self.byDue])
        #expect(try store.read { try $0.configurationRecord() }?.indexes == [Self.byDue])
        #expect(try Self.indexEntries(store) == 30)
        #expect(try Self.dueOrder(store) == (try Self.expectedDueOrder(store)))
        // Maintained by later writes, deletes included.
        try await Self.write(store, count: 10, from: 25)
        _ = try await store.delete("tasks", id: "t3")
        #expect(try Self.indexEntries(store) == 34)
        #expect(try Self.dueOrder(store) == (try Self.expectedDueOrder(store)))
        #expect(try store.verify().isConsistent)
        try await store.rebuildProjections()
        #expect(try Self.indexEntries(store) == 34)
        #expect(try Self.dueOrder(store) == (try Self.expectedDueOrder(store)))
    }

    @Test func opensThatDoNotDeclareKeepAndMaintainTheIndexes() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(directory.path, Self.configuration([Self.byDue]))
        do {
            // A tool or server: no declarations, the recorded indexes stay and are maintained.
            var configuration = Store.Configuration()
            configuration.searchChange = .useStored
            let store = try Store.open(at: directory.path, configuration: configuration)
            defer { store.close() }
            #expect(store.configuration.indexes == [Self.byDue])
            try await Self.write(store, count: 5, from: 100)
            #expect(try Self.dueOrder(store) == (try Self.expectedDueOrder(store)))
        }
        do {
            // Read-only: the recorded indexes answer.
            var configuration = Store.Configuration()
            configuration.readOnly = true
            configuration.indexes = [Self.byOwner]
            let store = try Store.open(at: directory.path, configuration: configuration)
            defer { store.close() }
            #expect(store.configuration.indexes == [Self.byDue])
            #expect(try Self.dueOrder(store) == (try Self.expectedDueOrder(store)))
            #expect(try store.verify().isConsistent)
        }
    }

    @Test func refuseUseStoredAndReplace() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(directory.path, Self.configuration([Self.byDue]))
        let refused = try #require(throws: EventStoreError.self) {
            try Store.open(at: directory.path, configuration: Self.configuration([Self.byOwner], .refuse))
        }
        #expect(refused.code == .configurationMismatch)
        #expect(refused.message.contains("tasks(owner,due)"))
        do {
            let store = try Store.open(
                at: directory.path, configuration: Self.configuration([Self.byOwner], .useStored))
            defer { store.close() }
            #expect(store.configuration.indexes == [Self.byDue])
            #expect(try store.read { try $0.configurationRecord() }?.indexes == [Self.byDue])
        }
        do {
            let store = try Store.open(at: directory.path, configuration: Self.configuration([Self.byOwner], .build))
            defer { store.close() }
            #expect(Set(store.configuration.indexes) == [Self.byDue, Self.byOwner])
            #expect(try Self.indexEntries(store) == 60)
            let query = Query("tasks", filter: .equal("owner", "bo")).sorted(by: "due")
            #expect(try store.plan(query).index == Self.byOwner)
            let expected = QueryReference.answer(
                try QueryReference.allItems(store, "tasks"), filter: query.filter, order: [SortField("due")])
            #expect(try store.query(query).items.map(\.id) == expected.map(\.id))
        }
        do {
            let store = try Store.open(at: directory.path, configuration: Self.configuration([Self.byOwner], .replace))
            defer { store.close() }
            #expect(store.configuration.indexes == [Self.byOwner])
            #expect(try Self.indexEntries(store) == 30)
            #expect(try store.verify().isConsistent)
            #expect(throws: EventStoreError.self) { try store.query(Query("tasks").sorted(by: "due")) }
        }
    }

    @Test func invalidDeclarationsAreRefused() throws {
        for index in [
            IndexDefinition("tasks", fields: []), IndexDefinition("tasks", fields: ["a", "a"]),
            IndexDefinition("", fields: ["a"]),
            IndexDefinition("tasks", fields: Array(repeating: "f", count: 9).enumerated().map { "f\($0.offset)" }),
        ] {
            let error = try #require(throws: EventStoreError.self) {
                try withTemporaryStore(configuration: Self.configuration([index])) { _ in }
            }
            #expect(error.code == .invalidName)
        }
    }

    @Test func verifyFindsADamagedIndex() async throws {
        try await withTemporaryStore(configuration: Self.configuration([Self.byDue])) { store in
            try await Self.write(store)
            #expect(try store.verify().isConsistent)
            try store.environment.write { tx in
                let databases = store.schema.generations[0]
                let database = try #require(databases.indexes)
                let runs = try IndexRunDirectory.load(tx: tx, state: databases.state).runs
                // A ghost entry in a new block of the newest run, t1's entry gone from the block
                // that held it, and a run the directory does not list.
                let ghost = IndexWriter.key(Self.byDue, id: "ghost", fields: ["due": 4])
                let t1 = IndexWriter.key(Self.byDue, id: "t1", fields: ["due": 1])
                var blocks: [(key: [UInt8], value: [UInt8])] = []
                try tx.forEach(in: database) { key, value in
                    blocks.append((Array(key), Array(value)))
                    return true
                }
                var removed = 0
                let decoded = IndexRunBlock.Decoded()
                for block in blocks {
                    try block.key.withUnsafeBytes { key in
                        try block.value.withUnsafeBytes {
                            try IndexRunBlock.decode(
                                first: UnsafeRawBufferPointer(rebasing: key[4...]), value: $0, into: decoded)
                        }
                    }
                    let keys = decoded.entries.indices.map { index in decoded.withKey(index) { Array($0) } }
                    guard keys.contains(t1) else { continue }
                    _ = try tx.delete(block.key, in: database)
                    let run = block.key.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    try tx.withWriteCursor(on: database) { cursor in
                        var writer = IndexRunBlock.Writer(run: run, appends: false)
                        for (index, key) in keys.enumerated() where key != t1 {
                            try key.withUnsafeBytes {
                                try writer.add($0, live: decoded.entries[index].live, cursor: cursor)
                            }
                        }
                        try writer.flush(cursor: cursor)
                    }
                    removed += 1
                }
                #expect(removed == 1)
                try tx.withWriteCursor(on: database) { cursor in
                    var newest = IndexRunBlock.Writer(run: try #require(runs.last).id, appends: false)
                    try ghost.withUnsafeBytes { try newest.add($0, live: true, cursor: cursor) }
                    try newest.flush(cursor: cursor)
                    var unlisted = IndexRunBlock.Writer(run: 9_999, appends: false)
                    try t1.withUnsafeBytes { try unlisted.add($0, live: true, cursor: cursor) }
                    try unlisted.flush(cursor: cursor)
                }
            }
            let report = try store.verify()
            #expect(!report.isConsistent)
            let problems = report.problems.filter { $0.database == "indexes" }
            #expect(problems.map(\.kind).sorted() == ["missing", "unexpected", "unexpected"], "\(problems)")
            #expect(problems.contains { $0.detail == "run 9999 is not in the index directory" })
        }
    }

    /// A block of the index that does not decode makes queries fail with a clear error, and
    /// verify report it, instead of reading past it.
    @Test func aDamagedBlockIsACorruptErrorNotACrash() async throws {
        try await withTemporaryStore(configuration: Self.configuration([Self.byDue])) { store in
            try await Self.write(store)
            try store.environment.write { tx in
                let database = try #require(store.schema.generations[0].indexes)
                var first: [UInt8] = []
                try tx.forEach(in: database) { key, _ in
                    first = Array(key)
                    return false
                }
                // Claims a suffix far longer than the value.
                try tx.put([0x7F, 0x7F, 0x7F], forKey: first, in: database)
            }
            let error = try #require(throws: EventStoreError.self) { try Self.dueOrder(store) }
            #expect(error.code == .corrupt)
            let report = try store.verify()
            #expect(report.problems.contains { $0.kind == "corrupt" && $0.database == "indexes" }, "\(report.problems)")
        }
    }

    /// A store made before indexes existed has no index databases: a read-only open still works
    /// (no indexes), and a writable open creates and builds them.
    @Test func storesWithoutIndexDatabases() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await Self.makeStore(directory.path) { store in
            try store.environment.write { tx in
                for generation in 0..<2 { try tx.drop(try tx.openDatabase(named: "g\(generation).indexes")) }
            }
        }
        do {
            var configuration = Store.Configuration()
            configuration.readOnly = true
            let store = try Store.open(at: directory.path, configuration: configuration)
            defer { store.close() }
            #expect(try store.count(in: "tasks") == 30)
            #expect(try store.query(Query("tasks").allowingScan()).items.count == 30)
            #expect(try store.verify().isConsistent)
        }
        let store = try Store.open(at: directory.path, configuration: Self.configuration([Self.byDue]))
        defer { store.close() }
        #expect(try Self.dueOrder(store) == (try Self.expectedDueOrder(store)))
    }

    // MARK: Record

    @Test func recordsWithoutIndexesKeepFormatOne() throws {
        let plain = ConfigurationRecord(search: SearchConfiguration(), tokenizerVersion: 1, projections: [])
        #expect(plain.encoded().first == 1)
        #expect(try ConfigurationRecord(decoding: plain.encoded()) == plain)
        let indexed = ConfigurationRecord(
            search: SearchConfiguration(), tokenizerVersion: 1, projections: [],
            indexes: [Self.byOwner, Self.byDue, Self.byDue])
        #expect(indexed.indexes == [Self.byDue, Self.byOwner])
        #expect(indexed.encoded().first == 2)
        #expect(try ConfigurationRecord(decoding: indexed.encoded()) == indexed)
        // Format 2 without indexes is not canonical; a damaged index is corrupt.
        var two = plain.encoded()
        two[0] = 2
        two.append(0)
        #expect(throws: EventStoreError.self) { try ConfigurationRecord(decoding: two) }
        var damaged = ConfigurationRecord(
            search: SearchConfiguration(), tokenizerVersion: 1, projections: [],
            indexes: [IndexDefinition("tasks", fields: ["a"])]
        ).encoded()
        damaged[damaged.count - 2] = 0  // the field name's length: an empty field name
        damaged.removeLast()
        let error = try #require(throws: EventStoreError.self) { try ConfigurationRecord(decoding: damaged) }
        #expect(error.code == .corrupt)
    }
}
