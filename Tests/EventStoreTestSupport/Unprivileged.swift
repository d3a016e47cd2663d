import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Running code as a user that file permissions bind, for tests of stores this user may not
/// write or read.
///
/// Root ignores permission bits (a `chmod 555` directory is still writable by root), so when the
/// tests run as root, as they do in CI containers, such a test must give up root first: an exit
/// test's child calls ``dropPrivileges()``, and a child program is started through `setpriv`
/// (``commandPrefix()``). Both switch to the user `nobody` (uid and gid 65534). Run as another
/// user, the permission bits bind already and nothing changes.
///
/// ```swift
/// try Unprivileged.makeReadOnly(storePath)   // r-x for everyone, no lock file
/// let result = try await EvstoreProcess.run(Unprivileged.commandPrefix() + [evstore, "dump", storePath])
/// ```
public enum Unprivileged {
    /// The user and group id of `nobody`.
    public static let nobody: UInt32 = 65534

    /// Whether this process runs as root, so that permission tests must drop privileges.
    public static var isRoot: Bool { geteuid() == 0 }

    /// Gives up root for `nobody` (in an exit test's child: this cannot be undone).
    ///
    /// - Returns: `nil` when done (or not root), else why it failed.
    public static func dropPrivileges() -> String? {
        guard isRoot else { return nil }
        if setgroups(0, nil) != 0 { return "setgroups: \(String(cString: strerror(errno)))" }
        if setgid(nobody) != 0 { return "setgid(\(nobody)): \(String(cString: strerror(errno)))" }
        if setuid(nobody) != 0 { return "setuid(\(nobody)): \(String(cString: strerror(errno)))" }
        return geteuid() == nobody ? nil : "still uid \(geteuid()) after setuid"
    }

    /// In an exit test's child: gives up root, runs `check`, and exits: with success when it
    /// returns `nil`, with failure after writing what it returns (or throws) to `log`, a file
    /// made by ``makeChildLog(in:)`` that the parent reads with ``complaint(in:)``.
    ///
    /// ```swift
    /// let log = try Unprivileged.makeChildLog(in: directory.path)
    /// await #expect(processExitsWith: .success) { [log = log as String] in
    ///     Unprivileged.runChild(reportingTo: log) { access("/", W_OK) == 0 ? "/ is writable" : nil }
    /// }
    /// #expect(Unprivileged.complaint(in: log).isEmpty, "\(Unprivileged.complaint(in: log))")
    /// ```
    public static func runChild(reportingTo log: String, _ check: () throws -> String?) -> Never {
        let complaint: String?
        if let problem = dropPrivileges() {
            complaint = "cannot give up root: \(problem)"
        } else {
            do {
                complaint = try check()
            } catch {
                complaint = "\(error)"
            }
        }
        guard let complaint else { exit(EXIT_SUCCESS) }
        try? Data((complaint + "\n").utf8).write(to: URL(fileURLWithPath: log))
        exit(EXIT_FAILURE)
    }

    /// Creates an empty file in `directory` that an unprivileged child may write (mode 0666).
    public static func makeChildLog(in directory: String) throws -> String {
        let path = directory + "/child.log"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path)
        return path
    }

    /// What the child wrote to `log`: empty when it succeeded.
    public static func complaint(in log: String) -> String {
        (try? String(contentsOfFile: log, encoding: .utf8)) ?? "(no log at \(log))"
    }

    /// The words that start a program as `nobody` when root (`setpriv --reuid=65534
    /// --regid=65534 --clear-groups`), none otherwise.
    ///
    /// - Throws: ``Unavailable`` when root and `setpriv` (util-linux) is missing: a permission
    ///   test must then fail, not pass without testing anything.
    public static func commandPrefix() throws -> [String] {
        guard isRoot else { return [] }
        guard
            let setpriv = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw Unavailable(
                "running as root, which ignores permission bits, and setpriv (util-linux) is missing: "
                    + "install util-linux or run the tests as a non-root user")
        }
        return [setpriv, "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups"]
    }

    /// Makes the store directory `path` readable and searchable by everyone and writable by no
    /// one (`r-x`, files `r--`), and removes its lock file unless `keepingLockFile`.
    public static func makeReadOnly(_ path: String, keepingLockFile: Bool = false) throws {
        let manager = FileManager.default
        if !keepingLockFile { try? manager.removeItem(atPath: path + "/lock.mdb") }
        for file in try manager.contentsOfDirectory(atPath: path) {
            try manager.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path + "/" + file)
        }
        try manager.setAttributes([.posixPermissions: 0o555], ofItemAtPath: path)
    }

    /// Makes `path` (a directory made read-only by ``makeReadOnly(_:keepingLockFile:)``) and
    /// its files writable by their owner again, so that it can be removed.
    public static func restoreWritable(_ path: String) {
        let manager = FileManager.default
        try? manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        for file in (try? manager.contentsOfDirectory(atPath: path)) ?? [] {
            try? manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path + "/" + file)
        }
    }

    /// The mechanism a permission test needs is missing.
    public struct Unavailable: Error, CustomStringConvertible {
        /// What is missing and what to do.
        public var description: String

        init(_ description: String) { self.description = description }
    }
}
