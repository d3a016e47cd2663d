import Foundation
import GRDB

/// SQLite through GRDB, the way an application would store the same data: a WAL database
/// (`DatabasePool`) with an event log, an items table kept current by upserts, and an FTS5
/// index over the items kept in sync by triggers (GRDB's `synchronize(withTable:)`).
///
/// ```sql
/// events(seq INTEGER PRIMARY KEY, origin BLOB, origin_seq INTEGER, stamp INTEGER, item TEXT,
///        op INTEGER, payload BLOB, UNIQUE(origin, origin_seq))      -- like EventStore's event ids
/// INDEX events_by_item(item, seq)                                   -- like EventStore's item history
/// items(pk INTEGER PRIMARY KEY, id TEXT UNIQUE, title TEXT, content TEXT, tags TEXT, version INTEGER)
/// items_fts USING fts5(title, content, tags, content='items', content_rowid='pk',
///                      tokenize='unicode61 remove_diacritics 2'), rank = bm25(3, 1, 2)
/// ```
///
/// Statements are prepared once per connection (`cachedStatement`). `durable` mode runs with
/// `synchronous=FULL` (the WAL is flushed at each commit), `relaxed` with `NORMAL` (GRDB's WAL
/// default: flushed at checkpoints only).
struct SQLiteEngine: BenchEngine {
    /// The event log's table and its index by item, as every SQLite store of the benchmark has it.
    static let eventLogSQL = """
        CREATE TABLE events(
            seq INTEGER PRIMARY KEY, origin BLOB NOT NULL, origin_seq INTEGER NOT NULL,
            stamp INTEGER NOT NULL, item TEXT NOT NULL, op INTEGER NOT NULL, payload BLOB NOT NULL,
            UNIQUE(origin, origin_seq));
        CREATE INDEX events_by_item ON events(item, seq);

        """

    let context: BenchContext

    init(context: BenchContext) { self.context = context }

    static let origin = Data(BenchCodec.origin)

    func open(_ path: String, mode: Mode) throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        let synchronous = mode.isDurable ? "FULL" : "NORMAL"
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            let value = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            guard value == (mode.isDurable ? 2 : 1) else { throw BenchError("PRAGMA synchronous is \(value ?? -1)") }
        }
        return pool
    }

    private func create(_ path: String, mode: Mode) throws -> DatabasePool {
        context.removeStore(path)
        let pool = try open(path, mode: mode)
        try pool.write { db in
            try db.execute(
                sql: SQLiteEngine.eventLogSQL + """
                    CREATE TABLE items(
                        pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT, content TEXT, tags TEXT,
                        version INTEGER NOT NULL);
                    """)
            if mode != .nosearch { try SQLiteEngine.createFullTextIndex(db) }
        }
        return pool
    }

    /// Creates the FTS5 table with its triggers, and fills it from the items once.
    static func createFullTextIndex(_ db: Database) throws {
        try db.create(virtualTable: "items_fts", using: FTS5()) { t in
            t.synchronize(withTable: "items")
            t.tokenizer = .unicode61(diacritics: .remove)
            t.column("title")
            t.column("content")
            t.column("tags")
        }
        try db.execute(sql: "INSERT INTO items_fts(items_fts, rank) VALUES('rank', 'bm25(3.0, 1.0, 2.0)')")
    }

    /// The write statements, looked up once per transaction.
    struct Statements {
        let insertEvent: Statement
        let upsertItem: Statement
        let patchItem: Statement
        let deleteItem: Statement

        init(_ db: Database) throws {
            insertEvent = try db.cachedStatement(
                sql: "INSERT INTO events(origin, origin_seq, stamp, item, op, payload) VALUES (?, ?, ?, ?, ?, ?)")
            upsertItem = try db.cachedStatement(
                sql: """
                    INSERT INTO items(id, title, content, tags, version) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET title = excluded.title, content = excluded.content,
                        tags = excluded.tags, version = excluded.version
                    """)
            patchItem = try db.cachedStatement(
                sql: """
                    UPDATE items SET title = coalesce(?, title), content = coalesce(?, content),
                        tags = coalesce(?, tags), version = ? WHERE id = ?
                    """)
            deleteItem = try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?")
        }

        /// Appends one event and updates its item (the triggers update the index).
        func apply(_ event: WorkEvent, sequence: Int) throws {
            var payload: [UInt8] = []
            BenchCodec.encodeFields(ItemFields(event), into: &payload)
            try insertEvent.execute(
                arguments: [
                    SQLiteEngine.origin, sequence, sequence, event.itemID, Int(event.operation.rawValue), Data(payload),
                ])
            try applyToItem(event.itemID, operation: event.operation, fields: ItemFields(event), version: sequence)
        }

        func applyToItem(_ id: String, operation: Operation, fields: ItemFields, version: Int) throws {
            let tags = fields.tags?.joined(separator: " ")
            switch operation {
            case .put: try upsertItem.execute(arguments: [id, fields.title, fields.content, tags, version])
            case .patch: try patchItem.execute(arguments: [fields.title, fields.content, tags, version, id])
            case .delete: try deleteItem.execute(arguments: [id])
            }
        }
    }

    func append(mode: Mode) throws -> ChildResult {
        let pool = try create(context.store(.sqlite, mode), mode: mode)
        var generator = context.workload.makeGenerator()
        var watch = Stopwatch()
        var sequence = 0
        while true {
            let batch = generator.next(1_000)
            if batch.isEmpty { break }
            let first = sequence + 1
            try watch.measure {
                try pool.write { db in
                    let statements = try Statements(db)
                    for (offset, event) in batch.enumerated() { try statements.apply(event, sequence: first + offset) }
                }
            }
            sequence += batch.count
        }
        try pool.close()
        var result = ChildResult()
        result.figures["append.\(mode.rawValue)"] = watch.rate(generator.produced)
        result.notes["checksum"] = generator.checksum.hex
        return result
    }

    func single(mode: Mode, count: Int) throws -> ChildResult {
        let pool = try create(context.store(.sqlite, mode, scenario: "single"), mode: mode)
        var generator = context.workload.makeGenerator()
        let events = generator.next(count)
        var watch = Stopwatch()
        try watch.measure {
            let group = context.options.singleGroup
            var start = 0
            while start < events.count {
                try pool.write { db in
                    let statements = try Statements(db)
                    for offset in start..<min(start + group, events.count) {
                        try statements.apply(events[offset], sequence: offset + 1)
                    }
                }
                start += group
            }
        }
        try pool.close()
        return ChildResult(figures: ["single.\(mode.rawValue)": watch.rate(events.count)])
    }

    /// SQLite has one writer at a time: the 32 threads' transactions run one after the other.
    func concurrent(writers: Int, perWriter: Int) throws -> ChildResult {
        let pool = try create(context.store(.sqlite, .durable, scenario: "concurrent"), mode: .durable)
        let shares = context.writerShares(writers: writers, perWriter: perWriter)
        let elapsed = try runConcurrently(writers: writers) { writer in
            for (sequence, event) in shares[writer] {
                try pool.write { db in try Statements(db).apply(event, sequence: sequence) }
            }
        }
        let total = shares.reduce(0) { $0 + $1.count }
        let count = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events") }
        try pool.close()
        guard count == total else { throw BenchError("SQLite holds \(count ?? -1) events, expected \(total)") }
        return ChildResult(figures: ["concurrent": Double(total) / (Double(elapsed) / 1e9)])
    }

    /// A search hit, as an application would fetch it.
    struct Hit {
        var id: String
        var title: String?
        var content: String?
        var tags: [String]
    }

    func reads(ids: [String]) throws -> ChildResult {
        let path = context.store(.sqlite)
        try context.requireStore(path)
        let pool = try open(path, mode: .durable)
        let sql = "SELECT id, title, content, tags FROM items WHERE id = ?"
        func item(_ id: String, _ db: Database) throws -> Hit? {
            guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [id]) else { return nil }
            let tags: String? = row[3]
            return Hit(
                id: row[0], title: row[1], content: row[2], tags: tags?.split(separator: " ").map(String.init) ?? [])
        }
        var found = 0
        var watch = Stopwatch()
        try watch.measure {
            for id in ids where try pool.read({ db in try item(id, db) }) != nil { found += 1 }
        }
        var batchWatch = Stopwatch()
        try batchWatch.measure {
            try pool.read { db in
                for id in ids where try item(id, db) != nil { found += 1 }
            }
        }
        var scanned = 0
        var fieldCount = 0
        var scanWatch = Stopwatch()
        try scanWatch.measure {
            try pool.read { db in
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT seq, origin, origin_seq, stamp, item, op, payload FROM events ORDER BY seq")
                while let row = try rows.next() {
                    let _: Int64 = row[0]
                    let _: String = row[4]
                    let fields = try row.withUnsafeData(atIndex: 6) { payload in
                        guard let payload else { throw BenchError("event without payload") }
                        return try payload.withUnsafeBytes { try BenchCodec.decodeFields($0) }
                    }
                    fieldCount += fields.title == nil ? 0 : 1
                    scanned += 1
                }
            }
        }
        try pool.close()
        return .reads(
            point: watch, batch: batchWatch, ids: ids.count, scan: scanWatch, scanned: scanned, found: found)
    }

    /// Replays the log into an empty items table with the index triggers dropped, then builds
    /// the FTS5 index once at the end, all in one transaction.
    func rebuild() throws -> ChildResult {
        let path = context.store(.sqlite)
        try context.requireStore(path)
        let pool = try open(path, mode: .durable)
        var count = 0
        var watch = Stopwatch()
        try watch.measure {
            try pool.write { db in
                try db.drop(table: "items_fts")
                try db.dropFTS5SynchronizationTriggers(forTable: "items_fts")
                try db.execute(sql: "DELETE FROM items")
                let statements = try Statements(db)
                let rows = try Row.fetchCursor(db, sql: "SELECT seq, item, op, payload FROM events ORDER BY seq")
                while let row = try rows.next() {
                    let sequence: Int = row[0]
                    let item: String = row[1]
                    let op: Int = row[2]
                    guard let operation = Operation(rawValue: UInt8(op)) else { throw BenchError("bad event row") }
                    let fields = try row.withUnsafeData(atIndex: 3) { payload in
                        guard let payload else { throw BenchError("event without payload") }
                        return try payload.withUnsafeBytes { try BenchCodec.decodeFields($0) }
                    }
                    try statements.applyToItem(item, operation: operation, fields: fields, version: sequence)
                    count += 1
                }
                try SQLiteEngine.createFullTextIndex(db)
            }
        }
        try pool.close()
        return ChildResult(figures: ["rebuild": watch.rate(count)])
    }

    /// The database and its WAL after a full checkpoint.
    func size() throws -> ChildResult {
        let path = context.store(.sqlite)
        try context.requireStore(path)
        let pool = try open(path, mode: .durable)
        var result = ChildResult()
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            if let rows = try? Row.fetchAll(db, sql: "SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name") {
                var search = 0
                for row in rows {
                    let name: String = row[0]
                    let bytes: Int = row[1]
                    result.figures["size.db.\(name)"] = Double(bytes) / 1_048_576
                    // FTS5's own tables (the text itself is in `items`, an external content table).
                    if name.hasPrefix("items_fts") { search += bytes }
                }
                result.figures["size.search"] = Double(search) / 1_048_576
            }
        }
        try pool.close()
        result.figures["size"] = Double(fileSize(path) + fileSize(path + "-wal")) / 1_048_576
        return result
    }
}
