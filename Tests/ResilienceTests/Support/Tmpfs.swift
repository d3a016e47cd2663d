import EventStoreTestSupport
import EventSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small tmpfs mounted for one test, to fill the disk on purpose. Mounting needs root
/// (CAP_SYS_ADMIN); without it ``init(at:size:)`` throws, so the test fails saying why.
struct Tmpfs {
    /// The mount point.
    let path: String
    /// The file that takes up space (see ``fill(leaving:)``).
    var filler: String { path + "/.filler" }

    /// Mounts a tmpfs of `size` bytes at `path` (created when missing).
    init(at path: String, size: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let status = Tmpfs.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard status == 0 else {
            throw SyncError(
                .local, "cannot mount a tmpfs at \(path) (mount exited with \(status)); the disk-full tests need root")
        }
        self.path = path
    }

    /// Runs `body` with a tmpfs of `size` bytes mounted at `mnt` in a new temporary directory (the
    /// directory also serves for files that must not be on the small disk); then unmounts it and
    /// removes the directory.
    static func withMounted<T>(
        size: Int, prefix: String, _ body: (Tmpfs, TemporaryDirectory) async throws -> T
    ) async throws -> T {
        let directory = TemporaryDirectory(prefix: prefix)
        defer { directory.remove() }
        let tmpfs = try Tmpfs(at: directory.appending("mnt"), size: size)
        defer { tmpfs.unmount() }
        return try await body(tmpfs, directory)
    }

    /// Unmounts the tmpfs (lazily: files a failed test left open do not keep it mounted).
    func unmount() {
        _ = Tmpfs.run("/bin/umount", ["-l", path])
    }

    /// The bytes free for an unprivileged writer.
    var freeBytes: Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Makes the filler file take all free space but `bytes` (rounded to pages).
    func fill(leaving bytes: Int) throws {
        emptyFiller()
        let length = freeBytes - bytes
        guard length > 0 else { return }
        // Close-on-exec: a process another test spawns meanwhile must not inherit the handle and
        // keep the filler's space taken after `emptyFiller()` unlinked it.
        let fd = open(filler, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SyncError(.local, "cannot create \(filler): errno \(errno)") }
        defer { close(fd) }
        let result = posix_fallocate(fd, 0, off_t(length))
        guard result == 0 else { throw SyncError(.local, "cannot fill \(path): errno \(result)") }
    }

    /// Frees the space the filler took.
    func emptyFiller() {
        unlink(filler)
    }

    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let process = try? SpawnedProcess(executable: executable, arguments: arguments) else { return -1 }
        return process.waitUntilExit().status
    }
}
