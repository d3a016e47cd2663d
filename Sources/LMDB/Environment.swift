internal import CLMDB
import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// An open LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// Open it once per process with ``open(path:configuration:)`` (a second open of the same path
/// returns the same instance, since LMDB forbids opening an environment twice in one process),
/// then run closure-scoped transactions:
///
/// ```swift
/// let environment = try Environment.open(path: "/tmp/example")
/// let db = try environment.write { tx in try tx.openDatabase(named: "notes", options: .create) }
/// try environment.write { tx in try tx.put(Array("hello".utf8), forKey: Array("k".utf8), in: db) }
/// let value = try environment.read { tx in try tx.value(forKey: Array("k".utf8), in: db) }
/// ```
///
/// The environment is `Sendable`: the LMDB environment is thread-safe, and transactions never
/// escape the closure that received them. The environment is opened with `MDB_NOTLS`, so read
/// transactions are tied to their handle, not to a thread.
///
/// When a write fills the map, the transaction is aborted, the map grows and the write closure
/// runs again: write closures must not have effects outside the transaction that cannot repeat.
public final class Environment: @unchecked Sendable {
    let env: OpaquePointer
    /// The directory of the environment.
    public let path: String
    /// The configuration the environment was opened with.
    public let configuration: Configuration
    /// Whether readers register in the lock file (`lock.mdb`) beside the data file.
    ///
    /// Always `true` for a writable environment. A read-only environment whose directory (or lock
    /// file) this process may not write is opened without the lock file instead, and this is
    /// `false`: its readers are then invisible to a writer in another process, which may reuse
    /// the pages they are reading. Such reads are safe only while no process writes the
    /// environment; a writer running at the same time can make them fail or see torn data.
    ///
    /// (On a read-only file system LMDB reads without the lock file by itself, and this stays
    /// `true`: nothing can write there.)
    public let usesLockFile: Bool

    let resizeLock = ReadWriteLock()
    /// The files this instance opened.
    let files: OpenedFiles
    /// Forced failures of this environment's LMDB calls (debug builds; see ``LMDBFunction``).
    let injector: FailureInjector
    private let readPool = Mutex<[PooledTransaction]>([])
    private let durabilityState: Mutex<Durability>
    private static let maxPooledReaders = 32

    /// Fired once `deinit` has closed the LMDB handle.
    let closeSignal = CloseSignal()

    private static let registry = Mutex<[String: RegisteredEnvironment]>([:])

    /// Opens the environment at `path`, or returns the instance this process already opened there
    /// (unless both of that instance's files were removed or replaced since: its store was
    /// deleted, or restored from a copy, while a caller still held the instance). When the path's
    /// last instance has just lost its last reference, the open waits until that instance has
    /// closed its handle, and then opens the files anew.
    ///
    /// A read-only open creates nothing beside a file that is not an LMDB environment: it checks
    /// `data.mdb` before it touches the lock file. When the directory (or `lock.mdb`) is not
    /// writable, it reads without the lock file (see ``usesLockFile`` for what that means).
    ///
    /// - Parameters:
    ///   - path: A directory. It is created when missing (unless read-only).
    ///   - configuration: Map size, limits and durability.
    /// - Returns: The open environment.
    /// - Throws: ``LMDBError`` — ``LMDBError/notDirectory`` when `path` is a file,
    ///   ``LMDBError/noSuchFile`` when a read-only `path` or its `data.mdb` is missing,
    ///   ``LMDBError/invalid`` when the directory holds a file that is not an LMDB environment,
    ///   ``LMDBError/permissionDenied`` when the files may not be read (or, when writable, written),
    ///   ``LMDBError/incompatible`` when this process holds the path open read-only and a
    ///   writable environment is asked for, ``LMDBError/noSpace`` when the disk is full (a data
    ///   file this open created is removed again, so a later open starts afresh).
    public static func open(path: String, configuration: Configuration = Configuration()) throws -> Environment {
        if !configuration.readOnly && configuration.createsDirectory {
            try createDirectory(path)
        }
        let canonical = try canonicalPath(path)
        while true {
            switch try registeredOrNew(canonical: canonical, path: path, configuration: configuration) {
            case .opened(let environment): return environment
            // The path's last instance is being torn down: its handle must close first.
            case .closing(let signal): signal.wait()
            }
        }
    }

    /// What ``open(path:configuration:)`` found under the registry's lock.
    private enum Registration {
        case opened(Environment)
        /// The path's instance is gone but its handle is not closed yet.
        case closing(CloseSignal)
    }

    private static func registeredOrNew(
        canonical: String, path: String, configuration: Configuration
    ) throws -> Registration {
        try registry.withLock { registry in
            if let entry = registry[canonical] {
                if let existing = entry.environment {
                    // An instance whose data file was removed since (its store deleted while a
                    // caller still held it) is not this path's environment any more: a new file
                    // is opened.
                    if !existing.files.wereRemoved(from: canonical) {
                        if existing.configuration.readOnly && !configuration.readOnly { throw LMDBError.incompatible }
                        return .opened(existing)
                    }
                } else if !entry.closeSignal.isClosed {
                    return .closing(entry.closeSignal)
                }
            }
            let injector = takeInjector(opening: path, canonical: canonical)
            do {
                let environment = try Environment(path: canonical, configuration: configuration, injector: injector)
                registry[canonical] = RegisteredEnvironment(
                    environment: environment, closeSignal: environment.closeSignal)
                return .opened(environment)
            } catch {
                keepInjector(injector, opening: canonical)
                throw error
            }
        }
    }

    private init(path: String, configuration: Configuration, injector: FailureInjector) throws {
        let flags = UInt32(MDB_NOTLS) | Environment.flags(for: configuration.durability)
        if configuration.readOnly {
            let opened = try Environment.openReadOnly(
                path: path, configuration: configuration, flags: flags, injector: injector)
            env = opened.env
            usesLockFile = opened.usesLockFile
        } else {
            env = try Environment.openHandle(path: path, configuration: configuration, flags: flags, injector: injector)
            usesLockFile = true
        }
        self.injector = injector
        self.path = path
        self.files = OpenedFiles(env: env, directory: path)
        self.configuration = configuration
        self.durabilityState = Mutex(configuration.durability)
        _ = try? checkReaders()
    }

    deinit {
        readPool.withLock { pool in
            for pooled in pool { mdbTxnAbort(pooled.txn) }
            pool.removeAll()
        }
        injector.willClose()
        mdbEnvClose(env)
        closeSignal.fire()
    }

    /// The largest key (and duplicate value) size LMDB accepts: 511 bytes in standard builds.
    public var maxKeySize: Int { Int(mdbEnvGetMaxKeySize(env)) }

    /// The version of the LMDB library in use, such as `0.9.24`.
    public static var libraryVersion: String {
        let (major, minor, patch) = mdbVersion()
        return "\(major).\(minor).\(patch)"
    }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction and returns its result.
    ///
    /// The transaction sees a consistent snapshot and never blocks writers. Copy data out before
    /// returning: buffers handed out by the transaction are invalid after the closure.
    ///
    /// - Parameter body: Work to do with the transaction. Do not store the transaction.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or an ``LMDBError`` from beginning the transaction.
    public func read<T, E: Error>(_ body: (ReadTransaction) throws(E) -> T) throws -> T {
        while true {
            do {
                return try resizeLock.withShared { () throws -> T in
                    let txn = try beginReadTransaction()
                    let transaction = ReadTransaction(txn: txn, environment: self)
                    defer {
                        transaction.invalidate()
                        recycleReadTransaction(txn)
                    }
                    return try body(transaction)
                }
            } catch LMDBError.mapResized {
                try adoptMapSize()
            }
        }
    }

    /// Runs `body` in a read-only transaction that is committed at the end, so that database
    /// handles opened in it stay open (an aborted or reset read transaction closes them).
    ///
    /// Use it to open the databases of a read-only environment at start-up.
    public func openDatabases<T, E: Error>(_ body: (ReadTransaction) throws(E) -> T) throws -> T {
        try resizeLock.withShared { () throws -> T in
            try withTransaction(ReadTransaction.self, readOnly: true, body)
        }
    }

    /// Runs `body` in a write transaction: commits when it returns, aborts when it throws.
    ///
    /// Writes are serialized: a second writer waits for the first to finish. When the map fills,
    /// the transaction is aborted, the map grows, and `body` runs again from the start.
    ///
    /// - Parameter body: Work to do with the transaction. Do not store the transaction.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the transaction is aborted), or an ``LMDBError``:
    ///   ``LMDBError/noSpace`` when the disk is full (also for the short write liblmdb reports as
    ///   an I/O error).
    public func write<T, E: Error>(_ body: (WriteTransaction) throws(E) -> T) throws -> T {
        precondition(!configuration.readOnly, "write transaction on a read-only environment")
        while true {
            do {
                return try resizeLock.withShared { () throws -> T in
                    try withTransaction(WriteTransaction.self, body)
                }
            } catch LMDBError.mapFull where configuration.growsAutomatically {
                try grow()
            } catch LMDBError.mapResized {
                try adoptMapSize()
            } catch let error as LMDBError {
                throw DiskSpace.classify(error, at: path)
            }
        }
    }

    /// The module's one begin/commit/abort sequence, for ``openDatabases(_:)``, ``write(_:)``
    /// and ``WriteTransaction/nested(_:)``: begins a transaction (a child of `parent`, when
    /// given), runs `body` with it, and commits when `body` returns or aborts when it throws. The
    /// transaction is invalidated before it ends.
    ///
    /// When `body` throws after a write of the transaction reported a full map, the error is
    /// ``LMDBError/mapFull`` (and `parent` learns of it), even when `body` wrapped it in its own:
    /// ``write(_:)`` then grows the map and runs the body again.
    func withTransaction<Transaction: ReadTransaction, T, E: Error>(
        _ type: Transaction.Type,
        readOnly: Bool = false,
        parent: WriteTransaction? = nil,
        _ body: (Transaction) throws(E) -> T
    ) throws -> T {
        let nested = parent != nil
        var txn: OpaquePointer?
        let flags = readOnly ? UInt32(MDB_RDONLY) : 0
        try lmdbCheck(mdbTxnBegin(injector, env, parent?.txn, flags, &txn, as: nested ? .nestedTxnBegin : .txnBegin))
        guard let txn else { throw LMDBError.badTransaction }
        let transaction = Transaction(txn: txn, environment: self)
        let result: T
        do {
            result = try body(transaction)
        } catch {
            transaction.invalidate()
            mdbTxnAbort(txn)
            if (transaction as? WriteTransaction)?.sawMapFull == true {
                parent?.sawMapFull = true
                throw LMDBError.mapFull
            }
            throw error
        }
        transaction.invalidate()
        let rc = mdbTxnCommit(injector, txn, as: nested ? .nestedTxnCommit : .txnCommit)
        if rc == MDB_MAP_FULL { parent?.sawMapFull = true }
        try lmdbCheck(rc)
        return result
    }

    private func beginReadTransaction() throws -> OpaquePointer {
        if let pooled = readPool.withLock({ $0.popLast() })?.txn {
            let rc = mdbTxnRenew(injector, pooled)
            if rc == 0 { return pooled }
            mdbTxnAbort(pooled)
            throw LMDBError(code: rc)
        }
        var txn: OpaquePointer?
        try lmdbCheck(mdbTxnBegin(injector, env, nil, UInt32(MDB_RDONLY), &txn, as: .txnBegin))
        guard let txn else { throw LMDBError.badTransaction }
        return txn
    }

    private func recycleReadTransaction(_ txn: OpaquePointer) {
        mdbTxnReset(txn)
        let kept = readPool.withLock { pool -> Bool in
            guard pool.count < Environment.maxPooledReaders else { return false }
            pool.append(PooledTransaction(txn: txn))
            return true
        }
        if !kept { mdbTxnAbort(txn) }
    }

    // MARK: Map size

    /// Grows the map, with no transaction of this process active.
    private func grow() throws {
        try resizeLock.withExclusive { () throws -> Void in
            drainReadPool()
            let current = infoHoldingResizeLock().mapSize
            guard current < configuration.maximumMapSize else { throw LMDBError.mapFull }
            let doubled = max(current * 2, current + (64 << 20))
            let newSize = min(doubled, configuration.maximumMapSize)
            try lmdbCheck(mdbEnvSetMapSize(injector, env, newSize))
        }
    }

    /// Adopts a map size that another process set.
    private func adoptMapSize() throws {
        try resizeLock.withExclusive { () throws -> Void in
            drainReadPool()
            try lmdbCheck(mdbEnvSetMapSize(injector, env, 0))
        }
    }

    private func drainReadPool() {
        readPool.withLock { pool in
            for pooled in pool { mdbTxnAbort(pooled.txn) }
            pool.removeAll()
        }
    }

    // MARK: Durability

    /// The durability policy now in force.
    public var durability: Durability { durabilityState.withLock { $0 } }

    /// Changes the durability policy for later commits.
    ///
    /// Switching from ``Durability/bulk`` back to a durable policy flushes the disk first.
    public func setDurability(_ durability: Durability) throws {
        try durabilityState.withLock { state throws -> Void in
            let all = UInt32(MDB_NOSYNC) | UInt32(MDB_NOMETASYNC)
            try lmdbCheck(mdbEnvSetFlags(injector, env, all, false))
            let flags = Environment.flags(for: durability)
            if flags != 0 { try lmdbCheck(mdbEnvSetFlags(injector, env, flags, true)) }
            if state == .bulk && durability != .bulk { try lmdbCheck(mdbEnvSync(injector, env, force: true)) }
            state = durability
        }
    }

    /// Flushes committed data to disk.
    ///
    /// - Parameter force: Flush even when the durability policy says not to (the usual case after
    ///   a ``Durability/bulk`` load).
    public func sync(force: Bool = true) throws {
        try lmdbCheck(mdbEnvSync(injector, env, force: force))
    }

    static func flags(for durability: Durability) -> UInt32 {
        switch durability.mode {
        case .durable: 0
        case .relaxed: UInt32(MDB_NOMETASYNC)
        case .bulk: UInt32(MDB_NOSYNC)
        }
    }
}

/// A reset read transaction kept for reuse; only touched under the pool's lock.
private struct PooledTransaction: @unchecked Sendable {
    let txn: OpaquePointer
}

/// A path's instance in the registry, and the signal of its handle's close (which outlives it).
private struct RegisteredEnvironment {
    weak var environment: Environment?
    let closeSignal: CloseSignal
}
