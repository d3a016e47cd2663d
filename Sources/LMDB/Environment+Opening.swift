internal import CLMDB

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Opening an environment: LMDB handles (read-only ones without a lock file where the directory
/// may not be written; the lock file backed with disk space first) and the directory's path.
extension Environment {
    /// Creates an LMDB handle and opens it at `path` with `flags`; the handle is closed again
    /// when opening fails. The calls go through `injector`, the environment's to be.
    static func openHandle(
        path: String, configuration: Configuration, flags: UInt32, injector: FailureInjector
    ) throws -> OpaquePointer {
        var env: OpaquePointer?
        try lmdbCheck(mdbEnvCreate(injector, &env))
        guard let env else { throw LMDBError.outOfMemory }
        var creating = false
        do {
            try lmdbCheck(mdbEnvSetMaxDatabases(injector, env, MDB_dbi(configuration.maxDatabases)))
            try lmdbCheck(mdbEnvSetMaxReaders(injector, env, UInt32(configuration.maxReaders)))
            try lmdbCheck(mdbEnvSetMapSize(injector, env, configuration.mapSize))
            let readOnly = flags & UInt32(MDB_RDONLY) != 0
            if flags & UInt32(MDB_NOLOCK) == 0 {
                // Back the lock table with disk space before LMDB maps it (SIGBUS on a full disk otherwise).
                try DiskSpace.backLockFile(directory: path, maxReaders: configuration.maxReaders, create: !readOnly)
            }
            creating = !readOnly && (DiskSpace.fileSize(path + "/data.mdb") ?? 0) == 0
            try lmdbCheck(mdbEnvOpen(injector, env, path, flags, 0o640))
        } catch {
            mdbEnvClose(env)
            if creating { DiskSpace.removeTornDataFile(directory: path) }
            throw DiskSpace.classify(error, at: path)
        }
        return env
    }

    /// Opens a read-only handle: first without the lock file, to check that `data.mdb` exists and
    /// is an LMDB data file (so nothing is created beside a file that is not), then with the lock
    /// file, or without it when the directory or `lock.mdb` may not be written.
    static func openReadOnly(
        path: String, configuration: Configuration, flags: UInt32, injector: FailureInjector
    ) throws -> (env: OpaquePointer, usesLockFile: Bool) {
        let readOnly = flags | UInt32(MDB_RDONLY)
        let unlocked = readOnly | UInt32(MDB_NOLOCK)
        func handle(_ flags: UInt32) throws -> OpaquePointer {
            try openHandle(path: path, configuration: configuration, flags: flags, injector: injector)
        }
        // Closed before the locked open: this process must hold one handle per path at a time.
        mdbEnvClose(try handle(unlocked))
        do {
            return (try handle(readOnly), true)
        } catch let error as LMDBError where error.code == EACCES || error.code == EPERM || error.code == EROFS {
            return (try handle(unlocked), false)
        }
    }

    // MARK: Paths

    static func createDirectory(_ path: String) throws {
        var isDirectory = stat()
        if stat(path, &isDirectory) == 0 {
            if (isDirectory.st_mode & S_IFMT) != S_IFDIR { throw LMDBError.notDirectory }
            return
        }
        let parent = parentDirectory(path)
        if parent != path && !parent.isEmpty { try createDirectory(parent) }
        if mkdir(path, 0o750) != 0 && errno != EEXIST { throw LMDBError(code: errno) }
    }

    static func parentDirectory(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    static func canonicalPath(_ path: String) throws -> String {
        guard let resolved = realpath(path, nil) else { throw LMDBError(code: errno) }
        defer { free(resolved) }
        var status = stat()
        let canonical = String(cString: resolved)
        if stat(canonical, &status) == 0 && (status.st_mode & S_IFMT) != S_IFDIR { throw LMDBError.notDirectory }
        return canonical
    }
}
