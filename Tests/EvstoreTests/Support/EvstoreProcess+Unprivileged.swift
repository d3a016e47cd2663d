import EventStoreTestSupport
import Foundation

extension EvstoreProcess {
    /// Runs `evstore` with `arguments` as a user that permission bits bind: as `nobody` through
    /// `setpriv` when the tests run as root, as the current user otherwise (see
    /// ``Unprivileged``).
    ///
    /// When `nobody` may not reach the built binary (a checkout under a private home directory),
    /// a copy in `scratch` (a directory everyone may enter) is run instead.
    ///
    /// - Throws: ``Unprivileged/Unavailable`` when root and `setpriv` is missing.
    static func runUnprivileged(_ arguments: [String], scratch: TemporaryDirectory) async throws -> ProcessResult {
        let prefix = try Unprivileged.commandPrefix()
        guard let setpriv = prefix.first else { return try await run(arguments) }
        let wrapper = Array(prefix.dropFirst())
        var binary = executablePath
        let reachable = try await run(wrapper + ["/usr/bin/test", "-x", binary], executable: setpriv)
        if reachable.status != 0 {
            binary = scratch.appending("evstore-unprivileged")
            if !FileManager.default.fileExists(atPath: binary) {
                try FileManager.default.copyItem(atPath: executablePath, toPath: binary)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary)
            }
        }
        return try await run(wrapper + [binary] + arguments, executable: setpriv)
    }
}
