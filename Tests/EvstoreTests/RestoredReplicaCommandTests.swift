import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// The restored-backup report, step by step with the `evstore` binary against a real server: a
/// replica restored from an older backup keeps its new work, gets back what it lost, and every
/// replica ends with the same items.
@Suite("evstore: a restored backup")
struct RestoredReplicaCommandTests {
    static func importLines(_ store: String, _ lines: [String], in directory: TemporaryDirectory) async throws {
        let file = directory.appending("import-\(UUID().uuidString).jsonl")
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await EvstoreProcess.run(["import", store, file])
        #expect(result.status == 0, "\(result)")
    }

    static func titles(_ store: String) async throws -> [String: String] {
        let dump = try await EvstoreProcess.run(["dump", store, "--items", "--format", "jsonl"])
        var titles: [String: String] = [:]
        for object in JSONLines.objects(dump) {
            let fields = object["fields"] as? [String: Any]
            titles[JSONLines.string(object, "id") ?? "?"] = fields?["title"] as? String
        }
        return titles
    }

    @Test("import, sync, backup, edit, sync, restore, edit, sync: nothing is lost and every replica agrees")
    func restoredBackup() async throws {
        try await withTemporaryDirectory(prefix: "evstore-restore") { directory in
            let phone = directory.appending("phone")
            let backup = directory.appending("backup")
            let fresh = directory.appending("fresh")
            try await SyncCommandTests.withServer(dataDirectory: directory.appending("server")) { url in
                try await Self.importLines(
                    phone,
                    [
                        #"{"collection": "notes", "id": "n1", "op": "put", "fields": {"title": "one"}}"#,
                        #"{"collection": "notes", "id": "n2", "op": "put", "fields": {"title": "two"}}"#,
                    ], in: directory)
                #expect(
                    SyncCommandTests.moved(try await SyncCommandTests.sync(phone, url))
                        == "pushed 2, pulled 0, conflicts 0"
                )
                let copied = try await EvstoreProcess.run(["backup", phone, backup])
                #expect(copied.status == 0, "\(copied)")
                try await Self.importLines(
                    phone,
                    [#"{"collection": "notes", "id": "n1", "op": "patch", "fields": {"title": "edit after backup"}}"#],
                    in: directory)
                #expect(
                    SyncCommandTests.moved(try await SyncCommandTests.sync(phone, url))
                        == "pushed 1, pulled 0, conflicts 0"
                )

                // The device is restored from the backup, and the user goes on working.
                try FileManager.default.removeItem(atPath: phone)
                try FileManager.default.moveItem(atPath: backup, toPath: phone)
                try await Task.sleep(for: .milliseconds(5))
                try await Self.importLines(
                    phone,
                    [
                        #"{"collection": "notes", "id": "n2", "op": "patch", "fields": {"title": "new work after restore"}}"#
                    ],
                    in: directory)
                let restoredSync = try await SyncCommandTests.sync(phone, url)
                #expect(JSONLines.int(restoredSync, "pushed") == 1, "\(restoredSync)")
                #expect(JSONLines.int(restoredSync, "pulled") == 1, "the lost edit comes back: \(restoredSync)")
                #expect(JSONLines.int(restoredSync, "restamped") == 1, "\(restoredSync)")

                _ = try await SyncCommandTests.sync(fresh, url)
                let again = try await SyncCommandTests.sync(phone, url)
                #expect(SyncCommandTests.moved(again) == "pushed 0, pulled 0, conflicts 0")
                #expect(JSONLines.int(again, "restamped") == 0)
                for store in [phone, fresh] {
                    let titles = try await Self.titles(store)
                    #expect(
                        titles == ["n1": "edit after backup", "n2": "new work after restore"], "\(store): \(titles)")
                }
                let diff = try await EvstoreProcess.run(["diff", phone, fresh, "--format", "jsonl"])
                #expect(diff.status == 0, "\(diff)")
                let verify = try await EvstoreProcess.run(["verify", phone])
                #expect(verify.status == 0, "\(verify)")
            }
        }
    }
}

extension RestoredReplicaCommandTests {
    @Test("two copies that reused one id: diff reports the id conflict, verify --against fails, each alone verifies")
    func diffAndVerifyReportReusedIDs() async throws {
        try await withTemporaryDirectory(prefix: "evstore-reused") { directory in
            let original = directory.appending("original")
            let copy = directory.appending("copy")
            try await Self.importLines(
                original, [#"{"collection": "notes", "id": "n1", "op": "put", "fields": {"title": "one"}}"#],
                in: directory)
            #expect(try await EvstoreProcess.run(["backup", original, copy]).status == 0)
            try await Self.importLines(
                original, [#"{"collection": "notes", "id": "n1", "op": "patch", "fields": {"title": "original's"}}"#],
                in: directory)
            try await Self.importLines(
                copy, [#"{"collection": "notes", "id": "n2", "op": "put", "fields": {"title": "copy's"}}"#],
                in: directory)

            let diff = try await EvstoreProcess.run(["diff", original, copy, "--format", "jsonl"])
            #expect(diff.status == 1, "\(diff)")
            let conflicts = JSONLines.objects(diff).filter { JSONLines.string($0, "kind") == "id-conflict" }
            #expect(conflicts.count == 1, "\(diff)")
            #expect(
                conflicts.first.flatMap { $0["digest_a"] as? String }
                    != conflicts.first.flatMap { $0["digest_b"] as? String })
            let table = try await EvstoreProcess.run(["diff", original, copy, "--format", "table"])
            #expect(table.stdout.contains("1 event id names different events in A and B"), "\(table)")

            for store in [original, copy] {
                let alone = try await EvstoreProcess.run(["verify", store])
                #expect(alone.status == 0, "\(alone)")
            }
            let against = try await EvstoreProcess.run(["verify", original, "--against", copy, "--format", "jsonl"])
            #expect(against.status == 1, "\(against)")
            #expect(against.stdout.contains("id-conflict"), "\(against)")
        }
    }
}
