import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore backup`: the copy is an ordinary store with the same events and items, and passes
/// `verify`.
@Suite("evstore backup")
struct BackupCommandTests {
    @Test("backup, then the copy opens, holds the same items and passes verify")
    func backupThenVerify() async throws {
        try await withTemporaryDirectory(prefix: "evstore-backup") { directory in
            let fixture = try MixedStore(in: directory)
            let destination = directory.appending("backups/today")
            let result = try await EvstoreProcess.run(["backup", fixture.path, destination])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains(destination), "\(result)")
            #expect(FileManager.default.fileExists(atPath: destination + "/data.mdb"))

            let (events, items) = try withStore(at: destination) { store in
                (try allEvents(store), try store.read { try $0.items(in: "notes", limit: 100).items })
            }
            #expect(events.map(\.id) == fixture.events.map(\.id))
            #expect(items.map(\.id) == ["n1", "n3"])
            #expect(items.first?.fields == MixedStore.expectedItems["notes/n1"])

            let verify = try await EvstoreProcess.run(["verify", destination, "--format", "jsonl"])
            #expect(verify.status == 0, "\(verify)")
            for section in ["--items", "--conflicts"] {
                let original = try await EvstoreProcess.run(["dump", fixture.path, section, "--format", "jsonl"])
                let copy = try await EvstoreProcess.run(["dump", destination, section, "--format", "jsonl"])
                #expect(!original.stdout.isEmpty && copy.stdout == original.stdout, "dump \(section)")
            }
        }
    }

    @Test("backup into a directory that is not empty: exit 1, one line, nothing overwritten")
    func backupIntoNonEmptyDirectory() async throws {
        try await withTemporaryDirectory(prefix: "evstore-backup") { directory in
            let fixture = try MixedStore(in: directory)
            let destination = directory.appending("occupied")
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
            try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: destination + "/notes.txt"))
            let result = try await EvstoreProcess.run(["backup", fixture.path, destination])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.count == 1, "\(result)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["notes.txt"])
        }
    }
}
