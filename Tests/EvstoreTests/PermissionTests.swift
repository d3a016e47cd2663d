import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore` on stores this user may not write or read, run as a user that permission bits bind
/// (`nobody` through `setpriv` when the tests run as root): read-only commands read a store in a
/// directory they may not write, without its lock file and creating nothing; a store they may
/// not read is one line saying "permission denied".
@Suite("evstore and file permissions")
struct PermissionTests {
    /// A store with three notes, made read-only for everyone (without its lock file unless
    /// `keepingLockFile`).
    static func readOnlyStore(in directory: TemporaryDirectory, keepingLockFile: Bool = false) throws -> String {
        let path = directory.appending("store")
        try withStore(at: path) { store in
            _ = try store.append([
                .put("notes", id: "n1", fields: ["title": "Read me", "content": "from a read-only directory"]),
                .put("notes", id: "n2", fields: ["title": "Second", "tags": ["x"]]),
                .patch("notes", id: "n1", fields: ["title": "Read me again"]),
            ])
        }
        try Unprivileged.makeReadOnly(path, keepingLockFile: keepingLockFile)
        return path
    }

    static func listing(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Read-only commands whose output is the same whoever runs them.
    static let commands: [[String]] = [
        ["dump", "STORE", "--format", "jsonl"], ["dump", "STORE", "--items", "--format", "jsonl"],
        ["dump", "STORE", "--terms", "--format", "jsonl"], ["search", "STORE", "read", "--format", "jsonl"],
        ["replay", "STORE", "--to", "2", "--format", "jsonl"],
        ["explain", "STORE", "--item", "notes/n1", "--format", "jsonl"],
        ["export", "STORE"],
    ]

    @Test("read-only commands read a store in a directory this user may not write", arguments: [false, true])
    func unwritableDirectory(keepingLockFile: Bool) async throws {
        try await withTemporaryDirectory(prefix: "evstore-permissions") { directory in
            let path = try Self.readOnlyStore(in: directory, keepingLockFile: keepingLockFile)
            defer { Unprivileged.restoreWritable(path) }
            let before = Self.listing(path)

            for command in Self.commands {
                let arguments = command.map { $0 == "STORE" ? path : $0 }
                let result = try await EvstoreProcess.runUnprivileged(arguments, scratch: directory)
                #expect(result.status == 0, "\(result)")
                #expect(!result.stdout.isEmpty, "\(result)")
                #expect(
                    result.errorLines == [
                        "evstore: note: \(path) is not writable, so it is read without its lock file; "
                            + "the results are reliable only while no process writes the store"
                    ], "\(result)")
                // The same answer as an ordinary read (a writable copy of the store).
                let copy = directory.appending("copy")
                if !FileManager.default.fileExists(atPath: copy) {
                    try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
                    try FileManager.default.copyItem(atPath: path + "/data.mdb", toPath: copy + "/data.mdb")
                }
                let ordinary = try await EvstoreProcess.run(command.map { $0 == "STORE" ? copy : $0 })
                #expect(ordinary.status == 0 && ordinary.stderr.isEmpty, "\(ordinary)")
                #expect(result.stdout == ordinary.stdout, "\(command.joined(separator: " "))")
            }
            for command in [["stats", path], ["verify", path], ["diff", path, path]] {
                let result = try await EvstoreProcess.runUnprivileged(
                    command + ["--format", "jsonl"], scratch: directory)
                #expect(result.status == 0, "\(result)")
            }
            let items = try await EvstoreProcess.runUnprivileged(
                ["dump", path, "--items", "--format", "jsonl"], scratch: directory)
            #expect(
                JSONLines.objects(items).compactMap { JSONLines.string($0, "id") }.sorted() == ["n1", "n2"], "\(items)")
            #expect(Self.listing(path) == before, "nothing created in the store's directory")
        }
    }

    @Test("a store this user may not read: exit 1 and one line saying permission denied")
    func unreadableStore() async throws {
        try await withTemporaryDirectory(prefix: "evstore-permissions") { directory in
            let path = try Self.readOnlyStore(in: directory)
            defer { Unprivileged.restoreWritable(path) }
            // The data file unreadable, then the directory not searchable.
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path + "/data.mdb")
            for command in [["dump", path], ["stats", path], ["verify", path], ["export", path]] {
                let result = try await EvstoreProcess.runUnprivileged(command, scratch: directory)
                ErrorReportingTests.expectOneLineFailure(result, mentioning: path)
                #expect(result.stderr.contains("permission denied"), "\(result)")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path + "/data.mdb")
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
            for command in [["dump", path, "--items"], ["search", path, "read"]] {
                let result = try await EvstoreProcess.runUnprivileged(command, scratch: directory)
                ErrorReportingTests.expectOneLineFailure(result, mentioning: "cannot open \(path): permission denied")
            }
            #expect(Self.listing(path) == ["data.mdb"], "nothing created in the store's directory")
        }
    }
}
