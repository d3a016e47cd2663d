internal import CLMDB

/// A read-only view of the environment at one moment, valid only inside the closure that
/// received it (see ``Environment/read(_:)``). Do not store it or pass it to another thread.
///
/// Buffers returned by a transaction point into the memory map: they are valid until the
/// transaction ends (or, in a write transaction, until the next write). Copy what you keep.
///
/// Using a transaction after its closure returned is a programmer error and traps.
public class ReadTransaction {
    var txnPointer: OpaquePointer?
    /// The environment this transaction belongs to.
    public let environment: Environment

    required init(txn: OpaquePointer, environment: Environment) {
        self.txnPointer = txn
        self.environment = environment
    }

    @inline(__always)
    var txn: OpaquePointer {
        guard let txnPointer else { preconditionFailure("transaction used outside its closure") }
        return txnPointer
    }

    func invalidate() { txnPointer = nil }

    /// Opens an existing named database.
    ///
    /// - Throws: ``LMDBError/notFound`` when the database does not exist.
    public func openDatabase(named name: String) throws -> Database {
        var dbi: MDB_dbi = 0
        try lmdbCheck(mdbDbiOpen(environment.injector, txn, name, 0, &dbi))
        return Database(handle: dbi, name: name)
    }

    /// Opens the unnamed main database, which lists the named databases.
    public func openMainDatabase() throws -> Database {
        var dbi: MDB_dbi = 0
        try lmdbCheck(mdbDbiOpen(environment.injector, txn, nil, 0, &dbi))
        return Database(handle: dbi, name: "")
    }

    /// The value stored under `key`, borrowed from the map, or `nil` when the key is absent.
    ///
    /// The buffer is valid until the transaction ends or, in a write transaction, the next write.
    public func value(forKey key: UnsafeRawBufferPointer, in database: Database) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(key)
        var v = MDB_val()
        let rc = mdbGet(environment.injector, txn, database.handle, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        return v.buffer
    }

    /// A copy of the value stored under `key`, or `nil` when the key is absent.
    public func value(forKey key: [UInt8], in database: Database) throws -> [UInt8]? {
        try key.withUnsafeBytes { key in try value(forKey: key, in: database).map { Array($0) } }
    }

    /// Runs `body` with a cursor over `database`; the cursor closes when `body` returns.
    public func withCursor<T, E: Error>(
        on database: Database,
        _ body: (Cursor) throws(E) -> T
    ) throws -> T {
        let wrapper = Cursor(cursor: try openCursor(on: database), environment: environment)
        defer { wrapper.close() }
        return try body(wrapper)
    }

    /// Runs `body` with `count` cursors over `database`, each positioned on its own (to walk
    /// several ranges side by side, as a merge of sorted runs does); they close when `body`
    /// returns.
    ///
    /// ```swift
    /// try tx.withCursors(on: db, count: 2) { cursors in
    ///     let left = try cursors[0].seek(atLeast: [1]), right = try cursors[1].seek(atLeast: [2])
    /// }
    /// ```
    public func withCursors<T, E: Error>(
        on database: Database, count: Int,
        _ body: ([Cursor]) throws(E) -> T
    ) throws -> T {
        var cursors: [Cursor] = []
        cursors.reserveCapacity(count)
        defer { for cursor in cursors { cursor.close() } }
        for _ in 0..<count {
            cursors.append(Cursor(cursor: try openCursor(on: database), environment: environment))
        }
        return try body(cursors)
    }

    /// A new cursor over `database`, for a ``Cursor`` to own and close.
    func openCursor(on database: Database) throws -> OpaquePointer {
        var cursor: OpaquePointer?
        try lmdbCheck(mdbCursorOpen(environment.injector, txn, database.handle, &cursor))
        guard let cursor else { throw LMDBError.badTransaction }
        return cursor
    }

    /// Calls `body` for each entry of `database` whose key is at least `start`, in key order,
    /// until `body` returns `false`.
    public func forEach(
        in database: Database,
        from start: UnsafeRawBufferPointer? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try withCursor(on: database) { cursor in
            var entry = try start.map { try cursor.seek(atLeast: $0) } ?? cursor.first()
            while let current = entry {
                guard try body(current.key, current.value) else { return }
                entry = try cursor.next()
            }
        }
    }

    /// Page statistics for `database`.
    public func statistics(of database: Database) throws -> DatabaseStatistics {
        var stat = MDB_stat()
        try lmdbCheck(mdbStat(environment.injector, txn, database.handle, &stat))
        return DatabaseStatistics(stat)
    }

    /// The number of entries in `database`.
    public func count(of database: Database) throws -> Int {
        try statistics(of: database).entries
    }

    /// The id of the transaction (the last committed write transaction, for a read transaction).
    public var id: Int { mdbTxnID(txn) }
}

@available(*, unavailable)
extension ReadTransaction: Sendable {}
