import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore demo`: the story runs end to end and leaves two converged, sound replicas behind.
@Suite("evstore demo")
struct DemoCommandTests {
    @Test("demo --dir leaves alone a directory it did not make")
    func foreignDirectoryIsLeftAlone() async throws {
        try await withTemporaryDirectory(prefix: "evstore-demo") { directory in
            let dir = directory.appending("mine")
            try FileManager.default.createDirectory(atPath: dir + "/phone", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: dir + "/phone/keep.txt", contents: Data("mine\n".utf8)))
            let result = try await EvstoreProcess.run(["demo", "--dir", dir])
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("did not make"), "\(result)")
            #expect(FileManager.default.fileExists(atPath: dir + "/phone/keep.txt"), "the file is kept")
        }
    }

    @Test("demo --dir exits 0, shows identical notes, the conflict and ok verifications; re-runnable")
    func demo() async throws {
        try await withTemporaryDirectory(prefix: "evstore-demo") { directory in
            let dir = directory.appending("demo")
            for run in 1...2 {
                let result = try await EvstoreProcess.run(["demo", "--dir", dir])
                #expect(result.status == 0, "run \(run): \(result)")
                let text = result.stdout
                #expect(text.contains("✔ phone and laptop hold identical notes"), "\(result)")
                #expect(text.contains("The conflict"), "the conflict section: \(result)")
                #expect(
                    result.lines.contains { $0.contains("\"Sync design v2\"") && $0.contains("← kept") }, "\(result)")
                #expect(text.contains("notes/sync-design · title"), "the explain section: \(result)")
                #expect(!text.contains("✘") && !text.contains("FAILED"), "\(result)")
                // One verification line per replica, each a pass ("✔ phone: …" or "phone: ok …").
                for replica in ["phone", "laptop"] {
                    let passed = result.lines.filter {
                        $0.hasPrefix("✔ \(replica): ") || $0.hasPrefix("\(replica): ok")
                    }
                    #expect(passed.count == 1 && passed.first?.contains("8 events") == true, "\(replica): \(result)")
                }
            }
            // The replicas it leaves behind are equal, sound, and hold the conflict.
            let diff = try await EvstoreProcess.run(["diff", dir + "/phone", dir + "/laptop", "--format", "jsonl"])
            #expect(diff.status == 0, "\(diff)")
            for replica in ["phone", "laptop"] {
                let verify = try await EvstoreProcess.run(["verify", dir + "/" + replica, "--format", "jsonl"])
                #expect(verify.status == 0, "\(verify)")
                let conflicts = try await EvstoreProcess.run([
                    "dump", dir + "/" + replica, "--conflicts", "--format", "jsonl",
                ])
                let records = JSONLines.objects(conflicts)
                #expect(records.count == 1, "\(conflicts)")
                #expect(records.first.flatMap { JSONLines.string($0, "item") } == "sync-design")
                #expect(records.first.flatMap { JSONLines.string($0, "field") } == "title")
            }
        }
    }
}
