internal import CLMDB

// One function per LMDB C call, and no `mdb_*` call anywhere else in the module.
//
// A function whose C call returns an error code asks the environment's `FailureInjector` first,
// by its `LMDBFunction` case: in debug builds (`ENABLE_MOCKING`) a test can make it return any
// code without calling LMDB; in release builds the check compiles away. Each returns the code as
// LMDB does (0 on success), and the caller handles a forced code as it handles LMDB's own.
// Functions that cannot fail are wrapped as well, so that this file is the module's whole view of
// LMDB's functions.

// MARK: Environment

/// `mdb_env_create`.
@inline(__always)
func mdbEnvCreate(_ injector: FailureInjector, _ env: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
    if let forced = injector.forcedCode(for: .envCreate) { return forced }
    return mdb_env_create(env)
}

/// `mdb_env_set_maxdbs`.
@inline(__always)
func mdbEnvSetMaxDatabases(_ injector: FailureInjector, _ env: OpaquePointer, _ count: MDB_dbi) -> Int32 {
    if let forced = injector.forcedCode(for: .envSetMaxDatabases) { return forced }
    return mdb_env_set_maxdbs(env, count)
}

/// `mdb_env_set_maxreaders`.
@inline(__always)
func mdbEnvSetMaxReaders(_ injector: FailureInjector, _ env: OpaquePointer, _ count: UInt32) -> Int32 {
    if let forced = injector.forcedCode(for: .envSetMaxReaders) { return forced }
    return mdb_env_set_maxreaders(env, count)
}

/// `mdb_env_set_mapsize`.
@inline(__always)
func mdbEnvSetMapSize(_ injector: FailureInjector, _ env: OpaquePointer, _ size: Int) -> Int32 {
    if let forced = injector.forcedCode(for: .envSetMapSize) { return forced }
    return mdb_env_set_mapsize(env, size)
}

/// `mdb_env_open`.
@inline(__always)
func mdbEnvOpen(
    _ injector: FailureInjector, _ env: OpaquePointer, _ path: String, _ flags: UInt32, _ mode: mdb_mode_t
) -> Int32 {
    if let forced = injector.forcedCode(for: .envOpen) { return forced }
    return mdb_env_open(env, path, flags, mode)
}

/// `mdb_env_close`.
@inline(__always)
func mdbEnvClose(_ env: OpaquePointer) {
    mdb_env_close(env)
}

/// `mdb_env_set_flags`.
@inline(__always)
func mdbEnvSetFlags(_ injector: FailureInjector, _ env: OpaquePointer, _ flags: UInt32, _ on: Bool) -> Int32 {
    if let forced = injector.forcedCode(for: .envSetFlags) { return forced }
    return mdb_env_set_flags(env, flags, on ? 1 : 0)
}

/// `mdb_env_sync`.
@inline(__always)
func mdbEnvSync(_ injector: FailureInjector, _ env: OpaquePointer, force: Bool) -> Int32 {
    if let forced = injector.forcedCode(for: .envSync) { return forced }
    return mdb_env_sync(env, force ? 1 : 0)
}

/// `mdb_env_copy2`.
@inline(__always)
func mdbEnvCopy2(_ injector: FailureInjector, _ env: OpaquePointer, _ path: String, _ flags: UInt32) -> Int32 {
    if let forced = injector.forcedCode(for: .envCopy) { return forced }
    return mdb_env_copy2(env, path, flags)
}

/// `mdb_reader_check`.
@inline(__always)
func mdbReaderCheck(_ injector: FailureInjector, _ env: OpaquePointer, _ dead: UnsafeMutablePointer<Int32>) -> Int32 {
    if let forced = injector.forcedCode(for: .readerCheck) { return forced }
    return mdb_reader_check(env, dead)
}

/// `mdb_env_info`, which cannot fail for an open environment.
@inline(__always)
func mdbEnvInfo(_ env: OpaquePointer) -> MDB_envinfo {
    var info = MDB_envinfo()
    mdb_env_info(env, &info)
    return info
}

/// `mdb_env_stat`, which cannot fail for an open environment.
@inline(__always)
func mdbEnvStat(_ env: OpaquePointer) -> MDB_stat {
    var stat = MDB_stat()
    mdb_env_stat(env, &stat)
    return stat
}

/// `mdb_env_get_maxkeysize`.
@inline(__always)
func mdbEnvGetMaxKeySize(_ env: OpaquePointer) -> Int32 {
    mdb_env_get_maxkeysize(env)
}

/// `mdb_version`: the library's major, minor and patch numbers.
func mdbVersion() -> (major: Int32, minor: Int32, patch: Int32) {
    var major: Int32 = 0
    var minor: Int32 = 0
    var patch: Int32 = 0
    _ = mdb_version(&major, &minor, &patch)
    return (major, minor, patch)
}

/// `mdb_strerror`: LMDB's message for one of its codes, or the system's for an `errno` value.
func mdbStrerror(_ code: Int32) -> String {
    String(cString: mdb_strerror(code))
}

// MARK: Transactions

/// `mdb_txn_begin`; `function` is ``LMDBFunction/txnBegin`` or ``LMDBFunction/nestedTxnBegin``.
@inline(__always)
func mdbTxnBegin(
    _ injector: FailureInjector, _ env: OpaquePointer, _ parent: OpaquePointer?, _ flags: UInt32,
    _ txn: UnsafeMutablePointer<OpaquePointer?>, as function: LMDBFunction
) -> Int32 {
    if let forced = injector.forcedCode(for: function) { return forced }
    return mdb_txn_begin(env, parent, flags, txn)
}

/// `mdb_txn_commit`; `function` is ``LMDBFunction/txnCommit`` or ``LMDBFunction/nestedTxnCommit``.
///
/// The transaction is freed whatever the outcome, as LMDB frees it on a failed commit: a forced
/// failure aborts it.
@inline(__always)
func mdbTxnCommit(_ injector: FailureInjector, _ txn: OpaquePointer, as function: LMDBFunction) -> Int32 {
    if let forced = injector.forcedCode(for: function) {
        mdbTxnAbort(txn)
        return forced
    }
    return mdb_txn_commit(txn)
}

/// `mdb_txn_abort`.
@inline(__always)
func mdbTxnAbort(_ txn: OpaquePointer) {
    mdb_txn_abort(txn)
}

/// `mdb_txn_reset`.
@inline(__always)
func mdbTxnReset(_ txn: OpaquePointer) {
    mdb_txn_reset(txn)
}

/// `mdb_txn_renew`.
@inline(__always)
func mdbTxnRenew(_ injector: FailureInjector, _ txn: OpaquePointer) -> Int32 {
    if let forced = injector.forcedCode(for: .txnRenew) { return forced }
    return mdb_txn_renew(txn)
}

/// `mdb_txn_id`.
@inline(__always)
func mdbTxnID(_ txn: OpaquePointer) -> Int {
    Int(mdb_txn_id(txn))
}

// MARK: Databases

/// `mdb_dbi_open`; a `nil` name opens the main database.
@inline(__always)
func mdbDbiOpen(
    _ injector: FailureInjector, _ txn: OpaquePointer, _ name: String?, _ flags: UInt32,
    _ dbi: UnsafeMutablePointer<MDB_dbi>
) -> Int32 {
    if let forced = injector.forcedCode(for: .dbiOpen) { return forced }
    guard let name else { return mdb_dbi_open(txn, nil, flags, dbi) }
    return mdb_dbi_open(txn, name, flags, dbi)
}

/// `mdb_stat`.
@inline(__always)
func mdbStat(
    _ injector: FailureInjector, _ txn: OpaquePointer, _ dbi: MDB_dbi, _ stat: UnsafeMutablePointer<MDB_stat>
) -> Int32 {
    if let forced = injector.forcedCode(for: .stat) { return forced }
    return mdb_stat(txn, dbi, stat)
}

/// `mdb_get`.
@inline(__always)
func mdbGet(
    _ injector: FailureInjector, _ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: UnsafeMutablePointer<MDB_val>,
    _ value: UnsafeMutablePointer<MDB_val>
) -> Int32 {
    if let forced = injector.forcedCode(for: .get) { return forced }
    return mdb_get(txn, dbi, key, value)
}

/// `mdb_put`.
@inline(__always)
func mdbPut(
    _ injector: FailureInjector, _ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: UnsafeMutablePointer<MDB_val>,
    _ value: UnsafeMutablePointer<MDB_val>, _ flags: UInt32
) -> Int32 {
    if let forced = injector.forcedCode(for: .put) { return forced }
    return mdb_put(txn, dbi, key, value, flags)
}

/// `mdb_del`; a `nil` value deletes every value of the key.
@inline(__always)
func mdbDel(
    _ injector: FailureInjector, _ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: UnsafeMutablePointer<MDB_val>,
    _ value: UnsafeMutablePointer<MDB_val>?
) -> Int32 {
    if let forced = injector.forcedCode(for: .del) { return forced }
    return mdb_del(txn, dbi, key, value)
}

/// `mdb_drop`: empties the database, or deletes it too when `delete` is true.
@inline(__always)
func mdbDrop(_ injector: FailureInjector, _ txn: OpaquePointer, _ dbi: MDB_dbi, delete: Bool) -> Int32 {
    if let forced = injector.forcedCode(for: .drop) { return forced }
    return mdb_drop(txn, dbi, delete ? 1 : 0)
}

// MARK: Cursors

/// `mdb_cursor_open`.
@inline(__always)
func mdbCursorOpen(
    _ injector: FailureInjector, _ txn: OpaquePointer, _ dbi: MDB_dbi, _ cursor: UnsafeMutablePointer<OpaquePointer?>
) -> Int32 {
    if let forced = injector.forcedCode(for: .cursorOpen) { return forced }
    return mdb_cursor_open(txn, dbi, cursor)
}

/// `mdb_cursor_close`.
@inline(__always)
func mdbCursorClose(_ cursor: OpaquePointer) {
    mdb_cursor_close(cursor)
}

/// `mdb_cursor_get`.
@inline(__always)
func mdbCursorGet(
    _ injector: FailureInjector, _ cursor: OpaquePointer, _ key: UnsafeMutablePointer<MDB_val>,
    _ value: UnsafeMutablePointer<MDB_val>, _ op: MDB_cursor_op
) -> Int32 {
    if let forced = injector.forcedCode(for: .cursorGet) { return forced }
    return mdb_cursor_get(cursor, key, value, op)
}

/// `mdb_cursor_put`; `value` points to two values for `MDB_MULTIPLE`.
@inline(__always)
func mdbCursorPut(
    _ injector: FailureInjector, _ cursor: OpaquePointer, _ key: UnsafeMutablePointer<MDB_val>,
    _ value: UnsafeMutablePointer<MDB_val>, _ flags: UInt32
) -> Int32 {
    if let forced = injector.forcedCode(for: .cursorPut) { return forced }
    return mdb_cursor_put(cursor, key, value, flags)
}

/// `mdb_cursor_del`.
@inline(__always)
func mdbCursorDel(_ injector: FailureInjector, _ cursor: OpaquePointer, _ flags: UInt32) -> Int32 {
    if let forced = injector.forcedCode(for: .cursorDel) { return forced }
    return mdb_cursor_del(cursor, flags)
}

/// `mdb_cursor_count`.
@inline(__always)
func mdbCursorCount(_ injector: FailureInjector, _ cursor: OpaquePointer, _ count: UnsafeMutablePointer<Int>) -> Int32 {
    if let forced = injector.forcedCode(for: .cursorCount) { return forced }
    return mdb_cursor_count(cursor, count)
}
