internal import CLMDB

/// One key/value pair seen through a cursor; both buffers are borrowed from the map.
public struct CursorEntry {
    /// The key bytes.
    public let key: UnsafeRawBufferPointer
    /// The value bytes.
    public let value: UnsafeRawBufferPointer
}

/// A position in a database, valid only inside the `withCursor` closure that received it.
///
/// ```swift
/// try tx.withCursor(on: db) { cursor in
///     var entry = try cursor.seek(atLeast: prefix)
///     while let current = entry, current.key.starts(with: prefix) {
///         // use current.key / current.value
///         entry = try cursor.next()
///     }
/// }
/// ```
public class Cursor {
    var pointer: OpaquePointer?
    let environment: Environment

    init(cursor: OpaquePointer, environment: Environment) {
        self.pointer = cursor
        self.environment = environment
    }

    @inline(__always)
    var cursor: OpaquePointer {
        guard let pointer else { preconditionFailure("cursor used outside its closure") }
        return pointer
    }

    func close() {
        if let pointer { mdbCursorClose(pointer) }
        pointer = nil
    }

    @inline(__always)
    func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> CursorEntry? {
        var k = key.map { MDB_val($0) } ?? MDB_val()
        var v = MDB_val()
        let rc = mdbCursorGet(environment.injector, cursor, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        return CursorEntry(key: k.buffer, value: v.buffer)
    }

    /// Moves to the first entry.
    public func first() throws -> CursorEntry? { try get(MDB_FIRST) }
    /// Moves to the last entry.
    public func last() throws -> CursorEntry? { try get(MDB_LAST) }
    /// Moves to the next entry (the next value of the same key first, in duplicate-sorted databases).
    public func next() throws -> CursorEntry? { try get(MDB_NEXT) }
    /// Moves to the previous entry.
    public func previous() throws -> CursorEntry? { try get(MDB_PREV) }
    /// The entry at the current position.
    public func current() throws -> CursorEntry? { try get(MDB_GET_CURRENT) }
    /// Moves to the first entry whose key is greater than or equal to `key`.
    /// An empty key (which LMDB refuses) moves to the first entry, the least key of all.
    public func seek(atLeast key: UnsafeRawBufferPointer) throws -> CursorEntry? {
        key.isEmpty ? try first() : try get(MDB_SET_RANGE, key: key)
    }
    /// Moves to the entry whose key equals `key`.
    public func seek(exactly key: UnsafeRawBufferPointer) throws -> CursorEntry? { try get(MDB_SET_KEY, key: key) }
    /// Moves to the first entry whose key is greater than or equal to `key`.
    public func seek(atLeast key: [UInt8]) throws -> CursorEntry? {
        try key.withUnsafeBytes { try seek(atLeast: $0) }
    }
    /// Moves to the first entry of the next key (skipping further values of the current key).
    public func nextKey() throws -> CursorEntry? { try get(MDB_NEXT_NODUP) }

    // MARK: Duplicate-sorted databases

    /// Moves to `key`'s first value that is greater than or equal to `value`.
    public func seek(key: UnsafeRawBufferPointer, valueAtLeast value: UnsafeRawBufferPointer) throws -> CursorEntry? {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdbCursorGet(environment.injector, cursor, &k, &v, MDB_GET_BOTH_RANGE)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        return CursorEntry(key: k.buffer, value: v.buffer)
    }

    /// Moves to the next value of the current key, or returns `nil` after its last value.
    public func nextDuplicate() throws -> CursorEntry? { try get(MDB_NEXT_DUP) }

    /// The number of values of the key at the cursor.
    public func duplicateCount() throws -> Int {
        var count = 0
        try lmdbCheck(mdbCursorCount(environment.injector, cursor, &count))
        return count
    }

    /// For ``DatabaseOptions/duplicateFixed``: up to a page of the current key's values, packed,
    /// starting at the cursor. The entry's `value` holds them back to back.
    public func currentMultiple() throws -> CursorEntry? { try get(MDB_GET_MULTIPLE) }

    /// For ``DatabaseOptions/duplicateFixed``: the next page of the current key's values.
    public func nextMultiple() throws -> CursorEntry? { try get(MDB_NEXT_MULTIPLE) }
}

@available(*, unavailable)
extension Cursor: Sendable {}

/// A cursor that can also write, from ``WriteTransaction/withWriteCursor(on:_:)``.
public final class WriteCursor: Cursor {
    let transaction: WriteTransaction

    init(cursor: OpaquePointer, environment: Environment, transaction: WriteTransaction) {
        self.transaction = transaction
        super.init(cursor: cursor, environment: environment)
    }

    /// Stores `value` under `key` and moves the cursor there.
    ///
    /// With ``PutOptions/append`` the key must sort after every existing key.
    ///
    /// - Returns: `false` when ``PutOptions/noOverwrite`` was given and the key exists.
    @discardableResult
    public func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, options: PutOptions = [])
        throws -> Bool
    {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdbCursorPut(environment.injector, cursor, &k, &v, options.rawValue)
        if rc == MDB_KEYEXIST && !options.isDisjoint(with: [.noOverwrite, .noDuplicateData]) { return false }
        try transaction.check(rc)
        return true
    }

    /// Reserves `count` bytes under `key` and lets `fill` write them in place.
    public func put(
        count: Int,
        forKey key: UnsafeRawBufferPointer,
        options: PutOptions = [],
        fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        var k = MDB_val(key)
        var v = MDB_val(mv_size: count, mv_data: nil)
        try transaction.check(
            mdbCursorPut(environment.injector, cursor, &k, &v, options.rawValue | UInt32(MDB_RESERVE)))
        try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
    }

    /// Stores several fixed-size values of `key` in one call (``DatabaseOptions/duplicateFixed``
    /// databases): `values` holds them back to back, each `elementSize` bytes, sorted.
    public func putDuplicates(_ values: UnsafeRawBufferPointer, elementSize: Int, forKey key: UnsafeRawBufferPointer)
        throws
    {
        precondition(elementSize > 0 && values.count % elementSize == 0, "values must be whole elements")
        guard !values.isEmpty else { return }
        var k = MDB_val(key)
        var data = (MDB_val(values), MDB_val(mv_size: values.count / elementSize, mv_data: nil))
        data.0.mv_size = elementSize
        let rc = withUnsafeMutablePointer(to: &data) { pointer in
            pointer.withMemoryRebound(to: MDB_val.self, capacity: 2) {
                mdbCursorPut(environment.injector, cursor, &k, $0, UInt32(MDB_MULTIPLE))
            }
        }
        try transaction.check(rc)
    }

    /// Deletes the entry at the cursor.
    public func deleteCurrent() throws {
        try transaction.check(mdbCursorDel(environment.injector, cursor, 0))
    }

    /// Deletes `entry` (where the cursor stands) and the entries after it, in key order, as long
    /// as `condition` holds for them; returns how many it deleted.
    ///
    /// The cursor steps from one entry to the next without searching the tree again, so
    /// deleting a run of adjacent keys costs about one seek, not one per key:
    ///
    /// ```swift
    /// try tx.withWriteCursor(on: db) { cursor in
    ///     let first = try cursor.seek(atLeast: prefix)
    ///     try cursor.deleteRun(from: first) { $0.key.starts(with: prefix) }
    /// }
    /// ```
    @discardableResult
    public func deleteRun(from entry: CursorEntry?, while condition: (CursorEntry) throws -> Bool) throws -> Int {
        var entry = entry
        var deleted = 0
        while let current = entry, try condition(current) {
            try deleteCurrent()
            deleted += 1
            // A delete leaves the cursor on the entry that followed, which MDB_NEXT then returns.
            entry = try next()
        }
        return deleted
    }
}
