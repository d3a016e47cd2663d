#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// What keeps a full disk from crashing the process: LMDB's files backed before they are mapped,
/// short writes named for what they are, and no torn data file left behind.
///
/// LMDB keeps its lock table (`lock.mdb`: the header and one slot per reader) in a file it sizes
/// with `ftruncate` and writes through a shared memory map. `ftruncate` allocates nothing, so on
/// a full file system the first store to the header (at open) or to a reader slot on a page not
/// used before (the first time that many readers run at once) cannot be backed, and the kernel
/// answers the page fault with SIGBUS, killing the whole process. Allocating the file's blocks
/// with `posix_fallocate` before `mdb_env_open` maps it turns that into an `ENOSPC` at open.
enum DiskSpace {
    /// A file system with less free space than this, after a write failed, is taken to be full.
    static let fullMargin = 1 << 20

    /// The size LMDB gives `lock.mdb` for `maxReaders` slots: its header (two cache-line
    /// padded blocks holding the reader and writer mutexes) and 64 bytes per reader after the
    /// first. Allocating exactly this size keeps the configured reader limit: LMDB adopts a
    /// larger file's size as more slots.
    static func lockFileSize(maxReaders: Int) -> Int {
        let cacheLine = 64
        func padded(_ size: Int) -> Int { (size + cacheLine - 1) / cacheLine * cacheLine }
        #if canImport(Darwin)
            let mutex = 32  // a POSIX semaphore name (MNAME_LEN)
        #else
            let mutex = MemoryLayout<pthread_mutex_t>.size
        #endif
        // magic, format, the reader mutex, then the 8-byte-aligned transaction id and the reader count.
        let body = (8 + mutex + 7) / 8 * 8 + 8 + 4
        let header = padded(body) + padded(mutex)
        return header + max(maxReaders, 1) * cacheLine
    }

    /// Backs every block of `directory/lock.mdb` with disk space before LMDB maps it.
    ///
    /// A missing lock file is created at LMDB's size (unless `create` is false); an existing one
    /// is allocated over its current size and never resized, since another process may have it
    /// mapped. Must run before this process opens the environment: closing a descriptor of the
    /// lock file would drop the `fcntl` locks LMDB holds on it.
    ///
    /// - Throws: ``LMDBError/noSpace`` when the blocks cannot be allocated; nothing else (a file
    ///   system without `fallocate`, or a lock file this process may not write, is left to LMDB).
    static func backLockFile(directory: String, maxReaders: Int, create: Bool) throws(LMDBError) {
        let path = directory + "/lock.mdb"
        let fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0o640)
        guard fd >= 0 else {
            if errno == ENOSPC { throw .noSpace }
            return
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return }
        let length = status.st_size > 0 ? Int(status.st_size) : lockFileSize(maxReaders: maxReaders)
        if allocate(fd, length: length, wasEmpty: status.st_size == 0) == ENOSPC { throw .noSpace }
    }

    /// Allocates the first `length` bytes of `fd`; returns the `errno` of a failure, or `0`.
    private static func allocate(_ fd: Int32, length: Int, wasEmpty: Bool) -> Int32 {
        #if canImport(Darwin)
            // No posix_fallocate: zero-fill a new file (an existing one may be mapped by another process).
            guard wasEmpty else { return 0 }
            let zeros = [UInt8](repeating: 0, count: length)
            let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, length, 0) }
            return written == length ? 0 : (written < 0 ? errno : ENOSPC)
        #else
            return posix_fallocate(fd, 0, off_t(length))
        #endif
    }

    /// The size of the file at `path`, or `nil` when it does not exist.
    static func fileSize(_ path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : nil
    }

    /// Removes `directory/data.mdb` when an open that created it failed before both meta pages
    /// were written: such a torn file is no environment, and LMDB would refuse it as
    /// ``LMDBError/invalid`` on every later attempt.
    static func removeTornDataFile(directory: String) {
        let path = directory + "/data.mdb"
        guard let size = fileSize(path), size < 2 * Int(getpagesize()) else { return }
        unlink(path)
    }

    /// Whether the file system holding `path` has less than ``fullMargin`` bytes free for this
    /// process.
    static func isNearlyFull(_ path: String) -> Bool {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return false }
        return Int(info.f_bavail) * Int(info.f_frsize) < fullMargin
    }

    /// `error`, with the `EIO` liblmdb reports for a short write (its comment: "short write,
    /// filesystem full?") named ``LMDBError/noSpace`` when the file system of `path` is indeed
    /// full.
    static func classify(_ error: LMDBError, at path: String) -> LMDBError {
        error == .ioError && isNearlyFull(path) ? .noSpace : error
    }
}
