/// An LMDB C function as this module calls it: what a test names to make a call fail.
///
/// Debug builds (where `ENABLE_MOCKING` is defined) can make the next calls of a function fail
/// with a chosen ``LMDBError`` instead of calling LMDB, per environment:
///
/// ```swift
/// environment._forceFailure(.txnCommit, error: .ioError)
/// try environment.write { tx in … }  // throws LMDBError.ioError; nothing was written
/// ```
///
/// There is one case for each function that returns an error code, and two more for the begin and
/// the commit of a ``WriteTransaction/nested(_:)`` transaction, so that a test can fail a nested
/// transaction without failing the one around it (and the other way round). The forced code is
/// handled as if LMDB had returned it: a forced ``LMDBError/notFound`` from ``get`` reads as a
/// missing key, a forced commit frees the transaction as a failed `mdb_txn_commit` does.
///
/// Functions that cannot fail (`mdb_txn_abort`, `mdb_env_close`, `mdb_env_info`, …) have no case.
public enum LMDBFunction: CaseIterable, Sendable, Hashable {
    // MARK: Opening an environment

    /// `mdb_env_create`, at ``Environment/open(path:configuration:)``.
    case envCreate
    /// `mdb_env_set_maxdbs`, at ``Environment/open(path:configuration:)``.
    case envSetMaxDatabases
    /// `mdb_env_set_maxreaders`, at ``Environment/open(path:configuration:)``.
    case envSetMaxReaders
    /// `mdb_env_set_mapsize`: at ``Environment/open(path:configuration:)``, when a full map grows
    /// and when the environment adopts a map size another process set.
    case envSetMapSize
    /// `mdb_env_open`, at ``Environment/open(path:configuration:)``.
    case envOpen

    // MARK: The environment

    /// `mdb_env_set_flags`, in ``Environment/setDurability(_:)``.
    case envSetFlags
    /// `mdb_env_sync`, in ``Environment/sync(force:)`` and ``Environment/setDurability(_:)``.
    case envSync
    /// `mdb_env_copy2`, in ``Environment/copy(to:compact:)``.
    case envCopy
    /// `mdb_reader_check`, in ``Environment/checkReaders()``.
    case readerCheck

    // MARK: Transactions

    /// `mdb_txn_begin` for a new top-level transaction: ``Environment/write(_:)``,
    /// ``Environment/openDatabases(_:)``, and ``Environment/read(_:)`` when no pooled read
    /// transaction is free.
    case txnBegin
    /// `mdb_txn_renew`: ``Environment/read(_:)`` reusing a pooled read transaction.
    case txnRenew
    /// `mdb_txn_commit` of a top-level transaction: ``Environment/write(_:)`` and
    /// ``Environment/openDatabases(_:)``.
    case txnCommit
    /// `mdb_txn_begin` of a ``WriteTransaction/nested(_:)`` transaction.
    case nestedTxnBegin
    /// `mdb_txn_commit` of a ``WriteTransaction/nested(_:)`` transaction.
    case nestedTxnCommit

    // MARK: Databases

    /// `mdb_dbi_open`: ``ReadTransaction/openDatabase(named:)``,
    /// ``WriteTransaction/openDatabase(named:options:)``, ``ReadTransaction/openMainDatabase()``.
    case dbiOpen
    /// `mdb_stat`: ``ReadTransaction/statistics(of:)`` and ``ReadTransaction/count(of:)``.
    case stat
    /// `mdb_get`: the `value(forKey:in:)` methods of ``ReadTransaction``.
    case get
    /// `mdb_put`: the `put` methods of ``WriteTransaction``.
    case put
    /// `mdb_del`: the `delete` methods of ``WriteTransaction``.
    case del
    /// `mdb_drop`: ``WriteTransaction/removeAll(in:)`` and ``WriteTransaction/drop(_:)``.
    case drop

    // MARK: Cursors

    /// `mdb_cursor_open`: ``ReadTransaction/withCursor(on:_:)``,
    /// ``WriteTransaction/withWriteCursor(on:_:)``.
    case cursorOpen
    /// `mdb_cursor_get`: every move of a ``Cursor``.
    case cursorGet
    /// `mdb_cursor_put`: the `put` methods of ``WriteCursor``.
    case cursorPut
    /// `mdb_cursor_del`: ``WriteCursor/deleteCurrent()`` and ``WriteCursor/deleteRun(from:while:)``.
    case cursorDel
    /// `mdb_cursor_count`: ``Cursor/duplicateCount()``.
    case cursorCount
}
