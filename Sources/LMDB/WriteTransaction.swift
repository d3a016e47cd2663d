internal import CLMDB

/// A read-write transaction, valid only inside the closure that received it (see
/// ``Environment/write(_:)``). It commits when the closure returns and aborts when it throws.
///
/// Writes invalidate buffers obtained earlier in the same transaction.
public final class WriteTransaction: ReadTransaction {
    /// Set when any write reported a full map, so that the environment grows the map even when
    /// the caller wrapped the error in its own.
    var sawMapFull = false

    @inline(__always)
    func check(_ rc: Int32) throws(LMDBError) {
        if rc == 0 { return }
        if rc == MDB_MAP_FULL { sawMapFull = true }
        throw LMDBError(code: rc)
    }

    /// Runs `body` in a nested transaction: its writes join this transaction when `body`
    /// returns, and are discarded alone when it throws.
    ///
    /// Do not use this transaction while `body` runs; use the one `body` receives.
    public func nested<T, E: Error>(_ body: (WriteTransaction) throws(E) -> T) throws -> T {
        try environment.withTransaction(WriteTransaction.self, parent: self, body)
    }

    /// Opens a named database, creating it when `options` contains ``DatabaseOptions/create``.
    ///
    /// Open every database once, at start-up, and share the handles.
    public func openDatabase(named name: String, options: DatabaseOptions) throws -> Database {
        var dbi: MDB_dbi = 0
        try lmdbCheck(mdbDbiOpen(environment.injector, txn, name, options.rawValue, &dbi))
        return Database(handle: dbi, name: name)
    }

    /// Stores `value` under `key`.
    ///
    /// - Returns: `false` when ``PutOptions/noOverwrite`` (or ``PutOptions/noDuplicateData``) was
    ///   given and the key (or pair) already exists; nothing is written then. Otherwise `true`.
    /// - Throws: ``LMDBError``; ``LMDBError/keyExists`` for an out-of-order ``PutOptions/append``.
    @discardableResult
    public func put(
        _ value: UnsafeRawBufferPointer,
        forKey key: UnsafeRawBufferPointer,
        in database: Database,
        options: PutOptions = []
    ) throws -> Bool {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdbPut(environment.injector, txn, database.handle, &k, &v, options.rawValue)
        if rc == MDB_KEYEXIST && !options.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return false }
        try check(rc)
        return true
    }

    /// Stores a copy of `value` under `key`. See ``put(_:forKey:in:options:)-(UnsafeRawBufferPointer,_,_,_)``.
    @discardableResult
    public func put(_ value: [UInt8], forKey key: [UInt8], in database: Database, options: PutOptions = []) throws
        -> Bool
    {
        try value.withUnsafeBytes { value in
            try key.withUnsafeBytes { key in try put(value, forKey: key, in: database, options: options) }
        }
    }

    /// Reserves `count` bytes under `key` and lets `fill` write them in place (no copy).
    ///
    /// Not for databases with ``DatabaseOptions/duplicateSort``.
    public func put(
        count: Int,
        forKey key: UnsafeRawBufferPointer,
        in database: Database,
        options: PutOptions = [],
        fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        var k = MDB_val(key)
        var v = MDB_val(mv_size: count, mv_data: nil)
        try check(mdbPut(environment.injector, txn, database.handle, &k, &v, options.rawValue | UInt32(MDB_RESERVE)))
        try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
    }

    /// Deletes `key` (and all its values, in a duplicate-sorted database).
    ///
    /// - Returns: `false` when the key did not exist.
    @discardableResult
    public func delete(_ key: UnsafeRawBufferPointer, in database: Database) throws -> Bool {
        var k = MDB_val(key)
        let rc = mdbDel(environment.injector, txn, database.handle, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try check(rc)
        return true
    }

    /// Deletes `key`. See ``delete(_:in:)-(UnsafeRawBufferPointer,_)``.
    @discardableResult
    public func delete(_ key: [UInt8], in database: Database) throws -> Bool {
        try key.withUnsafeBytes { try delete($0, in: database) }
    }

    /// Deletes one `value` of `key` in a duplicate-sorted database.
    @discardableResult
    public func delete(_ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in database: Database) throws
        -> Bool
    {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdbDel(environment.injector, txn, database.handle, &k, &v)
        if rc == MDB_NOTFOUND { return false }
        try check(rc)
        return true
    }

    /// Removes every entry of `database`, keeping the database itself.
    public func removeAll(in database: Database) throws {
        try check(mdbDrop(environment.injector, txn, database.handle, delete: false))
    }

    /// Deletes `database` itself with every entry; its handle is closed when the transaction
    /// commits and must not be used again.
    public func drop(_ database: Database) throws {
        try check(mdbDrop(environment.injector, txn, database.handle, delete: true))
    }

    /// Runs `body` with a writable cursor over `database`; the cursor closes when `body` returns.
    public func withWriteCursor<T, E: Error>(
        on database: Database,
        _ body: (WriteCursor) throws(E) -> T
    ) throws -> T {
        let wrapper = WriteCursor(cursor: try openCursor(on: database), environment: environment, transaction: self)
        defer { wrapper.close() }
        return try body(wrapper)
    }
}
