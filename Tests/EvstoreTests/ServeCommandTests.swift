import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import SyncTestSupport
import Testing

/// `evstore serve` with TLS and metrics options: what it refuses before it starts, and the
/// address it announces.
@Suite("evstore serve: TLS and metrics options")
struct ServeCommandTests {
    /// The test certificate and key of the SyncServer tests (a self-signed `localhost` certificate).
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SyncServerTests/Fixtures/\(name)").path
    }

    /// The arguments of `evstore serve` on a fresh data directory in `directory`, with a tokens
    /// file there, and `options`.
    static func serve(_ options: [String], in directory: TemporaryDirectory) throws -> [String] {
        let tokens = directory.appending("tokens.txt")
        try write("serve-token notes\n", to: tokens)
        return ["serve", "--data", directory.appending("data"), "--port", "0", "--tokens", tokens] + options
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Expects `result` to be a refusal to start: `status`, `message` on standard error, and no
    /// address announced.
    static func expectRefused(
        _ result: ProcessResult, status: Int32, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status && !result.timedOut, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(result)", sourceLocation: sourceLocation)
        #expect(!result.stdout.contains("listening"), "\(result)", sourceLocation: sourceLocation)
    }

    @Test("--tls-cert and --tls-key go together (exit 64)", arguments: ["--tls-cert", "--tls-key"])
    func tlsHalf(_ option: String) async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve-options") { directory in
            let arguments = try Self.serve([option, Self.fixture("localhost-cert.pem")], in: directory)
            let result = try await EvstoreProcess.run(arguments, timeout: .seconds(30))
            Self.expectRefused(result, status: 64, "\(option) needs")
            #expect(result.stderr.contains("give both (HTTPS) or neither (plain HTTP)"), "\(result)")
        }
    }

    @Test("a certificate that is not PEM stops the start with one line naming it (exit 1)")
    func invalidCertificate() async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve-options") { directory in
            let garbage = directory.appending("garbage.pem")
            try Self.write("not a certificate\n", to: garbage)
            let arguments = try Self.serve(
                ["--tls-cert", garbage, "--tls-key", Self.fixture("localhost-key.pem")], in: directory)
            let result = try await EvstoreProcess.run(arguments, timeout: .seconds(30))
            Self.expectRefused(result, status: 1, "evstore: invalid-tls: the TLS certificate chain \(garbage)")
            #expect(result.errorLines.count == 1, "\(result)")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("data")), "the server never started")
        }
    }

    @Test("an empty metrics token file stops the start (exit 1)")
    func emptyMetricsToken() async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve-options") { directory in
            let empty = directory.appending("metrics-token")
            try Self.write("\n", to: empty)
            let arguments = try Self.serve(["--metrics-token-file", empty], in: directory)
            let result = try await EvstoreProcess.run(arguments, timeout: .seconds(30))
            Self.expectRefused(result, status: 1, "the metrics token file \(empty) must hold one token")
        }
    }

    @Test(
        "--trust-unsigned-marks lets a mark without a signature start a new epoch; without it, 409 unverified-mark",
        arguments: [false, true])
    func trustUnsignedMarks(_ trusts: Bool) async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve-options") { directory in
            let server = try EvstoreProcess(
                try Self.serve(trusts ? ["--trust-unsigned-marks"] : [], in: directory))
            defer { server.terminate() }
            #expect(
                try await eventually(timeout: 30) { server.stdoutSoFar.contains("listening on") || !server.isRunning })
            let announced = try #require(
                server.stdoutSoFar.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://") }
                    .map(String.init),
                "\(server.stdoutSoFar) \(server.stderrSoFar)")
            let transport = HTTPTransport(baseURL: announced, token: "serve-token", storeName: "notes")
            let replica = try Store.open(at: directory.appending("replica"))
            defer { replica.close() }
            let event = try await replica.put("notes", id: "n1", fields: ["title": "one"])
            _ = try await transport.push(PushRequest(replica: replica.replicaID, events: [event]), check: nil)
            let info = try await transport.info(check: nil, replica: nil)
            #expect(info.signature != nil)
            let unsigned = ContinuityCheck(epoch: info.epoch, seq: 2, digest: info.digest)
            if trusts {
                #expect(try await transport.info(check: unsigned, replica: nil).epoch != info.epoch)
            } else {
                await expectSyncError(.unverifiedMark) { _ = try await transport.info(check: unsigned, replica: nil) }
                #expect(try await transport.info(check: nil, replica: nil).epoch == info.epoch)
            }
        }
    }

    @Test("with a certificate and key it announces an https address, and stops gracefully on SIGTERM")
    func servesHTTPS() async throws {
        try await withTemporaryDirectory(prefix: "evstore-serve-options") { directory in
            let tls = [
                "--tls-cert", Self.fixture("localhost-cert.pem"), "--tls-key", Self.fixture("localhost-key.pem"),
            ]
            let server = try EvstoreProcess(try Self.serve(tls, in: directory))
            #expect(
                try await eventually(timeout: 30) { server.stdoutSoFar.contains("listening on") || !server.isRunning })
            #expect(
                server.stdoutSoFar.contains("listening on https://127.0.0.1:"),
                "\(server.stdoutSoFar) \(server.stderrSoFar)")
            server.terminate()
            let result = await server.wait(timeout: .seconds(30))
            #expect(result.status == 0 && !result.timedOut, "\(result)")
        }
    }
}
