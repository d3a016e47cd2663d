internal import CLMDB

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The files an environment opened, by device and inode, to tell whether its directory still
/// holds them: an instance whose files were removed (its store deleted while a caller still held
/// it) is not the directory's environment any more.
struct OpenedFiles: Sendable {
    /// A file's device and inode.
    struct ID: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// `data.mdb`, from the handle LMDB holds; `lock.mdb`, when the directory has one.
    let data: ID?
    let lock: ID?

    init(env: OpaquePointer, directory: String) {
        var fd: mdb_filehandle_t = -1
        var status = stat()
        data = mdb_env_get_fd(env, &fd) == 0 && fstat(fd, &status) == 0 ? ID(status) : nil
        lock = stat(directory + "/lock.mdb", &status) == 0 ? ID(status) : nil
    }

    /// Whether both files were removed from `directory` or replaced there since they were
    /// opened. A file that cannot be checked (a `stat` failing otherwise than for a missing
    /// file), or one of the two still in place, counts as in place: two environments on one
    /// lock file in one process would take each other's locks.
    func wereRemoved(from directory: String) -> Bool {
        OpenedFiles.changed(data, at: directory + "/data.mdb") && OpenedFiles.changed(lock, at: directory + "/lock.mdb")
    }

    private static func changed(_ opened: ID?, at path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return errno == ENOENT }
        return opened.map { $0 != ID(status) } ?? false
    }
}
