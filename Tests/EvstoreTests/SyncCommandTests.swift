import EventStore
import EventStoreTestSupport
import Foundation
import Logging
import SyncServer
import Testing

/// `evstore sync` against a real sync server on 127.0.0.1, and `evstore serve`.
@Suite("evstore sync and serve")
struct SyncCommandTests {
    static let token = "test-token"

    /// A ``SyncServer`` in this process on a free loopback port, for the duration of `body`.
    static func withServer<T>(dataDirectory: String, _ body: (String) async throws -> T) async throws -> T {
        var configuration = SyncServer.Configuration(
            dataDirectory: dataDirectory, host: "127.0.0.1", port: 0, tokens: TokenTable([token: .allStores]))
        configuration.logger = Logger(label: "evstore-tests", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let task = Task { try await server.run() }
        do {
            let port = try await server.waitUntilRunning()
            let result = try await body("http://127.0.0.1:\(port)")
            task.cancel()
            _ = await task.result
            return result
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
    }

    /// Runs `evstore sync` and returns its JSON line.
    static func sync(
        _ path: String, _ url: String, token: String = token, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws -> [String: Any]
    {
        let result = try await EvstoreProcess.run(
            ["sync", path, "--remote", url, "--token", token, "--store-name", "notes", "--format", "jsonl"])
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        let lines = JSONLines.objects(result, sourceLocation: sourceLocation)
        #expect(lines.count == 1, "\(result)", sourceLocation: sourceLocation)
        return lines.first ?? [:]
    }

    /// `pushed/pulled/conflicts` of a sync line.
    static func moved(_ line: [String: Any]) -> String {
        "pushed \(JSONLines.int(line, "pushed") ?? -1), pulled \(JSONLines.int(line, "pulled") ?? -1), "
            + "conflicts \(JSONLines.int(line, "conflicts") ?? -1)"
    }

    @Test("sync pushes a store's events, a second client pulls them, a conflict resolves the same on both")
    func pushPullAndConflict() async throws {
        try await withTemporaryDirectory(prefix: "evstore-sync") { directory in
            let first = directory.appending("first")
            let second = directory.appending("second")
            try withStore(at: first) { store in
                _ = try store.append([
                    .put("notes", id: "n1", fields: ["title": "one", "content": "우리의 첫 노트"]),
                    .put("notes", id: "n2", fields: ["title": "two"]),
                    .put("tasks", id: "t1", fields: ["title": "task", "done": false]),
                    .patch("notes", id: "n1", fields: ["title": "one, edited"]),
                    .delete("notes", id: "n2"),
                ])
            }
            try await SyncCommandTests.withServer(dataDirectory: directory.appending("server")) { url in
                let pushed = try await SyncCommandTests.sync(first, url)
                #expect(
                    JSONLines.keys(pushed).filter { $0 != "head" }
                        == [
                            "conflicts", "duplicates", "epoch_changed", "pulled", "pushed", "replica", "restamped",
                            "server_head",
                        ])
                #expect(SyncCommandTests.moved(pushed) == "pushed 5, pulled 0, conflicts 0")
                #expect(JSONLines.int(pushed, "server_head") == 5)
                #expect(JSONLines.bool(pushed, "epoch_changed") == false)
                let again = try await SyncCommandTests.sync(first, url)
                #expect(SyncCommandTests.moved(again) == "pushed 0, pulled 0, conflicts 0")

                // A new replica: the directory does not exist yet.
                let pulled = try await SyncCommandTests.sync(second, url)
                #expect(SyncCommandTests.moved(pulled) == "pushed 0, pulled 5, conflicts 0")
                let itemsFirst = try await EvstoreProcess.run(["dump", first, "--items", "--format", "jsonl"])
                let itemsSecond = try await EvstoreProcess.run(["dump", second, "--items", "--format", "jsonl"])
                #expect(!itemsFirst.stdout.isEmpty && itemsSecond.stdout == itemsFirst.stdout)

                // Both change the same field while apart; the later write wins on both.
                try withStore(at: first) {
                    _ = try $0.append([.patch("notes", id: "n1", fields: ["title": "from first"])])
                }
                try await Task.sleep(for: .milliseconds(5))
                try withStore(at: second) {
                    _ = try $0.append([.patch("notes", id: "n1", fields: ["title": "from second"])])
                }
                #expect(
                    SyncCommandTests.moved(try await SyncCommandTests.sync(first, url))
                        == "pushed 1, pulled 0, conflicts 0"
                )
                #expect(
                    SyncCommandTests.moved(try await SyncCommandTests.sync(second, url))
                        == "pushed 1, pulled 1, conflicts 1")
                #expect(
                    SyncCommandTests.moved(try await SyncCommandTests.sync(first, url))
                        == "pushed 0, pulled 1, conflicts 1"
                )
                let diff = try await EvstoreProcess.run(["diff", first, second, "--format", "jsonl"])
                #expect(diff.status == 0, "\(diff)")
                for path in [first, second] {
                    let explain = try await EvstoreProcess.run(
                        ["explain", path, "--item", "notes/n1", "--field", "title", "--format", "jsonl"])
                    let winners = JSONLines.objects(explain).filter { JSONLines.bool($0, "won") == true }
                    #expect(
                        winners.count == 1 && winners.first.flatMap { JSONLines.string($0, "value") } == "from second",
                        "\(explain)")
                }

                // A wrong token: exit 1 and one line.
                let refused = try await EvstoreProcess.run(
                    ["sync", first, "--remote", url, "--token", "wrong", "--store-name", "notes", "--format", "jsonl"])
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.errorLines.count == 1 && refused.stdout.isEmpty, "\(refused)")
            }
        }
    }

    @Test("a server that is not there: exit 1 and one line, within seconds")
    func unreachableServer() async throws {
        try await withTemporaryDirectory(prefix: "evstore-sync") { directory in
            let path = directory.appending("store")
            try withStore(at: path) { _ = try $0.append([.put("notes", id: "n1", fields: ["title": "x"])]) }
            // A port that was just free: nothing listens there, so connecting is refused at once.
            let port = try await SyncCommandTests.freePort()
            var finished: ProcessResult?
            let (elapsed, lateness) = try await measuringTimerLateness {
                finished = try await EvstoreProcess.run(
                    ["sync", path, "--remote", "http://127.0.0.1:\(port)", "--token", "t", "--store-name", "notes"],
                    timeout: .seconds(45))
            }
            let result = try #require(finished)
            #expect(!result.timedOut, "a refused connection should fail fast, not after the 60 s request deadline")
            // Well under the deadline, with room for a process that starts slowly on a loaded
            // machine (alone it takes a tenth of a second; 16 s once under the full suite).
            #expect(elapsed < .seconds(40) + lateness, "took \(elapsed), timers ran \(lateness) late")
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.count == 1 && result.stderr.hasPrefix("evstore: "), "\(result)")
        }
    }

    /// A loopback port nothing listens on: one a server had, after the server stopped.
    static func freePort() async throws -> Int {
        return try await withTemporaryDirectory(prefix: "evstore-sync") { directory in
            return try await withServer(dataDirectory: directory.appending("server")) { url in
                try #require(Int(url.split(separator: ":").last ?? ""))
            }
        }
    }

    @Test("sync --follow pulls another client's changes as they reach the server, and stops cleanly on SIGTERM")
    func follow() async throws {
        try await withTemporaryDirectory(prefix: "evstore-follow") { directory in
            let writer = directory.appending("writer")
            let follower = directory.appending("follower")
            try withStore(at: writer) { store in
                _ = try store.append([.put("notes", id: "n1", fields: ["title": "first"])])
            }
            try await Self.withServer(dataDirectory: directory.appending("data")) { url in
                _ = try await Self.sync(writer, url)
                let process = try EvstoreProcess(
                    [
                        "sync", follower, "--remote", url, "--token", Self.token, "--store-name", "notes", "--follow",
                        "--format", "jsonl",
                    ])
                func heads() -> [Int] {
                    process.stdoutSoFar.split(separator: "\n").compactMap { line in
                        guard let data = line.data(using: .utf8),
                            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                            object["phase"] as? String == "up-to-date"
                        else { return nil }
                        return object["head"] as? Int
                    }
                }
                #expect(try await eventually { heads().contains(1) || !process.isRunning }, "\(process.stderrSoFar)")
                // A change pushed by another client reaches the follower without a poll.
                try withStore(at: writer) { store in
                    _ = try store.append([.put("notes", id: "n2", fields: ["title": "second"])])
                }
                _ = try await Self.sync(writer, url)
                #expect(try await eventually { heads().contains(2) || !process.isRunning }, "\(process.stdoutSoFar)")
                #expect(heads().contains(2) && process.isRunning, "\(process.stdoutSoFar) \(process.stderrSoFar)")
                process.terminate()
                let result = await process.wait(timeout: .seconds(30))
                #expect(result.status == 0 && !result.timedOut, "\(result)")
            }
            let items = try await EvstoreProcess.run(["dump", follower, "--items", "--format", "jsonl"])
            #expect(JSONLines.objects(items).count == 2, "\(items)")
        }
    }

    @Test("serve --port 0 announces its port, serves sync, and stops gracefully on SIGTERM")
    func serve() async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve") { directory in
            let tokens = directory.appending("tokens.txt")
            try Data("# test tokens\nserve-token notes\n".utf8).write(to: URL(fileURLWithPath: tokens))
            let client = directory.appending("client")
            try withStore(at: client) { store in
                _ = try store.append(
                    (1...7).map { .put("notes", id: "n\($0)", fields: ["title": .string("note \($0)")]) })
            }
            let server = try EvstoreProcess([
                "serve", "--data", directory.appending("data"), "--port", "0", "--tokens", tokens,
            ])
            var port: Int?
            let deadline = ContinuousClock.now + .seconds(30)
            while port == nil && server.isRunning && ContinuousClock.now < deadline {
                let announced = server.stdoutSoFar + server.stderrSoFar
                if let range = announced.firstRange(of: /127\.0\.0\.1:(\d+)/) {
                    port = Int(announced[range].split(separator: ":").last ?? "")
                } else {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            guard let port else {
                server.terminate()
                let result = await server.wait(timeout: .seconds(10))
                Issue.record("the server did not announce its port: \(result)")
                return
            }
            let url = "http://127.0.0.1:\(port)"
            let line = try await EvstoreProcess.run(
                [
                    "sync", client, "--remote", url, "--token", "serve-token", "--store-name", "notes", "--format",
                    "jsonl",
                ])
            #expect(line.status == 0, "\(line)")
            #expect(JSONLines.objects(line).first.map(SyncCommandTests.moved) == "pushed 7, pulled 0, conflicts 0")
            // The token grants "notes" only.
            let other = try await EvstoreProcess.run(
                [
                    "sync", client, "--remote", url, "--token", "serve-token", "--store-name", "other", "--format",
                    "jsonl",
                ])
            #expect(other.status == 1, "\(other)")
            // The server's copy, read while the server runs.
            let served = try await EvstoreProcess.run([
                "dump", directory.appending("data/notes"), "--items", "--format", "jsonl",
            ])
            let local = try await EvstoreProcess.run(["dump", client, "--items", "--format", "jsonl"])
            #expect(served.status == 0 && served.stdout == local.stdout, "\(served)")

            server.terminate()
            let result = await server.wait(timeout: .seconds(30))
            #expect(result.status == 0, "a graceful stop: \(result)")
            #expect(!result.timedOut)
        }
    }

    @Test(
        "serve refuses a port outside 1–65535 (exit 64) instead of listening on another one",
        arguments: ["70000", "65536", "-1", "99999999999"])
    func serveWithAPortOutOfRange(_ port: String) async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve") { directory in
            let tokens = directory.appending("tokens.txt")
            try Data("serve-token notes\n".utf8).write(to: URL(fileURLWithPath: tokens))
            let result = try await EvstoreProcess.run(
                ["serve", "--data", directory.appending("data"), "--port=\(port)", "--tokens", tokens],
                timeout: .seconds(30))
            #expect(result.status == 64, "\(result)")
            #expect(!result.timedOut)
            #expect(
                result.stderr.contains("--port must be from 1 to 65535 (or 0 for any free port), not \(port)"),
                "\(result)")
            #expect(!result.stdout.contains("listening"), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("data")), "the server never started")
        }
    }

    @Test(
        "serve refuses a tokens file that grants nothing (exit 64), since no client could use the server",
        arguments: ["", "\n\n", "# tokens go here\n   # none yet\n"])
    func serveWithATokensFileGrantingNothing(_ text: String) async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve") { directory in
            let tokens = directory.appending("tokens.txt")
            try Data(text.utf8).write(to: URL(fileURLWithPath: tokens))
            let result = try await EvstoreProcess.run(
                ["serve", "--data", directory.appending("data"), "--port", "0", "--tokens", tokens],
                timeout: .seconds(30))
            #expect(result.status == 64, "\(result)")
            #expect(!result.timedOut)
            #expect(result.errorLines.count == 1, "\(result)")
            #expect(
                result.stderr.hasPrefix("evstore: the tokens file \(tokens) grants no store to any token"), "\(result)")
            #expect(!result.stdout.contains("listening"), "\(result)")
        }
    }

    @Test("serve with a missing tokens file: exit 1 and one line")
    func serveWithoutTokens() async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve") { directory in
            let missing = directory.appending("no-tokens.txt")
            let result = try await EvstoreProcess.run(
                ["serve", "--data", directory.appending("data"), "--port", "0", "--tokens", missing],
                timeout: .seconds(30))
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.count == 1 && result.stderr.contains(missing), "\(result)")
        }
    }
}
