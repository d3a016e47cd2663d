import AsyncHTTPClient
import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import SyncServer
import SyncTestSupport
import Testing

/// Native TLS: the server serves HTTPS with a certificate chain and key from PEM files, a client
/// that trusts the certificate syncs through it, and files that cannot be used stop the start.
///
/// The fixtures are a self-signed certificate for `localhost` and `127.0.0.1` (P-256, valid for
/// 100 years), its key, and an unrelated key.
struct TLSTests {
    static func fixture(_ name: String) -> String {
        Bundle.module.path(forResource: name, ofType: "pem", inDirectory: "Fixtures") ?? "missing-fixture-\(name).pem"
    }

    static let certificate = fixture("localhost-cert")
    static let key = fixture("localhost-key")
    static let tls = SyncServer.TLS(certificateChainPath: certificate, privateKeyPath: key)

    /// Runs `body` with an HTTP client that trusts the test certificate and nothing else, on
    /// `eventLoopGroup` (by default the shared one the server runs on too).
    static func withTrustingClient(
        eventLoopGroup: (any EventLoopGroup)? = nil, _ body: (HTTPClient) async throws -> Void
    ) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificate))
        let client = HTTPClient(
            eventLoopGroupProvider: eventLoopGroup.map { .shared($0) } ?? .singleton,
            configuration: .init(tlsConfiguration: tls))
        do {
            try await body(client)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    // MARK: Serving HTTPS

    @Test("two replicas sync over HTTPS through a client that trusts the server's certificate")
    func syncOverHTTPS() async throws {
        try await withServer(configure: { $0.tls = TLSTests.tls }) { fixture in
            #expect(fixture.baseURL.hasPrefix("https://127.0.0.1:"))
            try await Self.withTrustingClient { client in
                func synchronizer(_ store: Store) -> Synchronizer {
                    let transport = HTTPTransport(
                        baseURL: fixture.baseURL, token: ServerFixture.notesToken, storeName: "notes",
                        httpClient: client)
                    return Synchronizer(store: store, transport: transport, remoteName: "server")
                }
                let alice = try fixture.client("alice")
                let bob = try fixture.client("bob")
                try await alice.put("notes", id: "n1", fields: ["title": "sent over TLS"])
                try await alice.put("notes", id: "n2", fields: ["title": "and this one"])
                let pushed = try await synchronizer(alice).sync()
                #expect(pushed.pushed == 2 && pushed.serverHead == 2, "\(pushed)")
                try await bob.put("notes", id: "n3", fields: ["title": "from bob"])
                let both = try await synchronizer(bob).sync()
                #expect(both.pushed == 1 && both.pulled == 2, "\(both)")
                #expect(try await synchronizer(alice).sync().pulled == 1)
                for store in [alice, bob] {
                    for id in ["n1", "n2", "n3"] { #expect(try store.item("notes", id) != nil, "\(id)") }
                }
                let reply = try await RunningServer.send(
                    to: fixture.baseURL, .GET, "/healthz", token: nil, client: client)
                #expect(reply.status == 200)
            }
        }
    }

    @Test("plain HTTP to the TLS port fails, and so does HTTPS without trust in the certificate")
    func refusals() async throws {
        try await withServer(configure: { $0.tls = TLSTests.tls }) { fixture in
            let plain = "http://" + fixture.baseURL.dropFirst("https://".count)
            // The server takes the request for a failed handshake and closes the connection.
            let plainError = await #expect(throws: HTTPClientError.self) {
                try await RunningServer.send(to: plain, .GET, "/healthz", token: nil, timeout: .seconds(10))
            }
            #expect(plainError == .remoteConnectionClosed)
            // The shared client trusts the system's roots only (and retries the handshake until
            // the deadline, hence the short one).
            await #expect(throws: NIOSSLError.self) {
                try await RunningServer.send(to: fixture.baseURL, .GET, "/healthz", token: nil, timeout: .seconds(2))
            }
            try await Self.withTrustingClient { client in
                let reply = try await RunningServer.send(
                    to: fixture.baseURL, .GET, "/healthz", token: nil, client: client)
                #expect(reply.status == 200, "the server serves on after the failed handshakes")
            }
        }
    }

    // MARK: Files that cannot be used

    /// A way the TLS files can be wrong.
    enum Unusable: String, CaseIterable, Sendable {
        case missingCertificate, garbageCertificate, keyAsCertificate, missingKey, garbageKey, anotherKey

        /// The certificate and key paths, and what the error says.
        func files(in directory: TemporaryDirectory) throws -> (certificate: String, key: String, says: String) {
            let garbage = directory.appending("garbage.pem")
            try Data("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n".utf8)
                .write(to: URL(fileURLWithPath: garbage))
            let missing = directory.appending("missing.pem")
            let (certificate, key) = (TLSTests.certificate, TLSTests.key)
            return switch self {
            case .missingCertificate:
                (missing, key, "cannot read the TLS certificate chain \(missing): No such file or directory")
            case .garbageCertificate: (garbage, key, "the TLS certificate chain \(garbage) is not valid PEM")
            case .keyAsCertificate: (key, key, "the TLS certificate chain \(key)")
            case .missingKey:
                (certificate, missing, "cannot read the TLS private key \(missing): No such file or directory")
            case .garbageKey: (certificate, garbage, "the TLS private key \(garbage) is not valid PEM")
            case .anotherKey:
                (
                    certificate, TLSTests.fixture("other-key"),
                    "the TLS private key \(TLSTests.fixture("other-key")) does not go with"
                )
            }
        }
    }

    @Test(
        "a certificate or key that cannot be used stops the start with a clear error, before a store opens",
        arguments: Unusable.allCases)
    func unusableFiles(_ unusable: Unusable) async throws {
        let directory = TemporaryDirectory(prefix: "syncserver-tls")
        defer { directory.remove() }
        let (certificate, key, says) = try unusable.files(in: directory)
        var configuration = SyncServer.Configuration(
            dataDirectory: directory.appending("data"), port: 0, tokens: TokenTable(["t": .allStores]))
        configuration.tls = SyncServer.TLS(certificateChainPath: certificate, privateKeyPath: key)
        configuration.logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let error = await #expect(throws: SyncError.self) { try await server.run() }
        #expect(error?.code == .invalidTLS, "\(String(describing: error))")
        #expect(error?.message.contains(says) == true, "\(String(describing: error))")
        #expect(server.port == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("data")), "no store was opened")
    }
}
