import ArgumentParser
import EventStore
import EventSync
import EvstoreKit
import Foundation
import Logging
import SyncServer

extension EvstoreCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the sync server.",
            discussion: """
                The tokens file has one token a line: TOKEN STORE [STORE…], with * for every store \
                and # for comments. A tokens file that grants nothing (only comments or blank lines) \
                is refused with exit status 64, as is a port outside 1–65535 (0 picks any free \
                port). Prints the address it listens on (useful with --port 0), logs to standard \
                error, and stops gracefully on SIGINT or SIGTERM.

                The stores live either in a data directory (--data, one LMDB store per \
                subdirectory, one server process) or in a PostgreSQL database that several server \
                processes share (--postgres URL); give exactly one.

                With --tls-cert and --tls-key (PEM files, both or neither) it serves HTTPS itself; \
                otherwise plain HTTP, for a reverse proxy that terminates TLS. GET /metrics serves \
                Prometheus metrics, to anyone who reaches the port unless --metrics-token-file \
                names a file holding the bearer token it requires (--no-metrics turns it off).

                Examples:
                  evstore serve --data ./server-data --port 8080 --tokens tokens.txt
                  evstore serve --postgres postgres://evstore@db:5432/evstore --port 8080 --tokens tokens.txt
                  evstore serve --data ./server-data --port 8443 --tokens tokens.txt \\
                    --tls-cert fullchain.pem --tls-key privkey.pem
                """)

        @Option(help: "The data directory (one store per subdirectory).") var data: String?
        @Option(
            help: ArgumentHelp(
                "A PostgreSQL database shared by several servers: postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…]. "
                    + "Repeat to spread the stores over several databases by name (always the same ones, in the same order).",
                valueName: "url"))
        var postgres: [String] = []
        @Option(help: "The address to listen on.") var host = "127.0.0.1"
        @Option(help: "The port, 1–65535 (0: any free port).") var port = 8080
        @Option(help: "The tokens file (it must grant at least one store).") var tokens: String
        @Option(help: ArgumentHelp("The longest a live pull waits here, 0–25.", valueName: "seconds"))
        var pullWaitLimit = 25
        @Option(help: ArgumentHelp("Serve HTTPS with this certificate chain (PEM; with --tls-key).", valueName: "file"))
        var tlsCert: String?
        @Option(help: ArgumentHelp("The certificate's private key (PEM; with --tls-cert).", valueName: "file"))
        var tlsKey: String?
        @Flag(inversion: .prefixedNo, help: "Serve Prometheus metrics at /metrics.") var metrics = true
        @Flag(
            help: ArgumentHelp(
                "Let a continuity mark without a signature start a new epoch, for clients of an earlier release "
                    + "after a restore (any token holder can then make every client re-sync)."))
        var trustUnsignedMarks = false
        @Option(help: ArgumentHelp("A file holding the token /metrics requires (default: open).", valueName: "file"))
        var metricsTokenFile: String?

        func validate() throws {
            if let problem = ServerSetup.portProblem(port) { throw ValidationError(problem) }
            guard (0...25).contains(pullWaitLimit) else {
                throw ValidationError("--pull-wait-limit must be 0–25 seconds")
            }
            if let problem = ServerSetup.tlsProblem(certificate: tlsCert, key: tlsKey) {
                throw ValidationError(problem)
            }
        }

        func run() async throws {
            try await runTool {
                var configuration = try ServerSetup.configuration(
                    dataDirectory: data, postgres: postgres, host: host, port: port, tokensFile: tokens)
                configuration.pullWaitLimit = .seconds(pullWaitLimit)
                configuration.trustsUnsignedMarks = trustUnsignedMarks
                configuration.tls = try ServerSetup.tls(certificate: tlsCert, key: tlsKey)
                configuration.metricsEnabled = metrics
                configuration.metricsToken = try metricsTokenFile.map(ServerSetup.metricsToken(fromFile:))
                LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
                configuration.logger = Logger(label: "evstore.server")
                let server = SyncServer(configuration: configuration)
                let running = Task { try await server.runService() }
                do {
                    let port = try await server.waitUntilRunning()
                    let scheme = configuration.tls == nil ? "http" : "https"
                    print(
                        "listening on \(scheme)://\(host):\(port)  (stores \(configuration.backend); stop with Ctrl-C)")
                    fflush(nil)
                } catch {
                    try await running.value
                    throw error
                }
                try await running.value
            }
        }
    }
}
