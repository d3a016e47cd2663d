public import EventStore
public import EventSync
public import EventSyncService
import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
public import ServiceLifecycle
import Synchronization
import UnixSignals

/// The sync server: protocol v1 over HTTP (Hummingbird 2), one ``EventStore/Store`` per store
/// name under a data directory.
///
/// ```swift
/// let tokens = try TokenTable(contentsOfFile: "/etc/evstore/tokens")
/// let server = SyncServer(configuration: .init(dataDirectory: "/var/lib/evstore", port: 8080, tokens: tokens))
/// try await server.runService()   // until SIGINT or SIGTERM, then a graceful shutdown
/// ```
///
/// `SyncServer` is a ServiceLifecycle `Service`: put it in your own `ServiceGroup` to run it
/// beside other services; a graceful shutdown stops accepting connections, lets the requests
/// in flight finish, then closes the stores. With port `0` the system picks a free port:
/// ``waitUntilRunning()`` returns it.
///
/// Every request is logged with a request id, also sent back in the `x-request-id` header and in
/// problem responses.
///
/// The server serves HTTPS itself when ``Configuration/tls`` names a certificate chain and key,
/// and its metrics in the Prometheus text format at `GET /metrics` unless
/// ``Configuration/metricsEnabled`` is off (see the *Deploying the sync server* article).
public final class SyncServer: Service, Sendable {
    /// How the server runs.
    public struct Configuration: Sendable {
        /// Where the stores are: by default LMDB environments in a data directory
        /// (``EventSyncService/SyncBackend/lmdb(dataDirectory:)``); the PostgreSQL backend
        /// (`SyncPostgres`) lets several server processes serve the same stores.
        public var backend: SyncBackend
        /// The address to listen on.
        public var host: String
        /// The port to listen on (`0`: any free port).
        public var port: Int
        /// The bearer tokens and the stores they grant.
        public var tokens: TokenTable
        /// The limits on requests and pages.
        public var limits = SyncLimits()
        /// The configuration of the stores (durability, clock skew bound, search fields).
        public var storeConfiguration = Store.Configuration()
        /// How long a connection may send nothing while a request is being read (or before the
        /// first one) before the server closes it.
        public var idleTimeout: Duration = .seconds(30)
        /// How long the server waits for a whole push body; a slower body gets 408 (this bounds
        /// clients that trickle bytes to hold a connection).
        public var bodyTimeout: Duration = .seconds(60)
        /// How long a response may make no progress — none of it reaches the client's side of
        /// the connection — before the server closes the connection. A client that stops reading
        /// a page would otherwise hold its connection and the page's bytes for good; one that
        /// reads slowly keeps its connection, since a response goes out in pieces of 64 KiB and
        /// each piece that leaves is progress.
        public var writeTimeout: Duration = .seconds(30)
        /// Whether a push to a missing store creates it, when the token grants that store (by
        /// name or with `*`). Otherwise the push gets 404.
        public var createsStoresOnPush = true
        /// Whether a continuity check without a signature may start a new epoch, as before
        /// servers signed their marks (`false` by default; see
        /// ``EventSyncService/SyncService/Configuration/trustsUnsignedMarks``).
        public var trustsUnsignedMarks = false
        /// The longest a live pull waits here (at most ``EventSync/SyncLimits/maxPullWait``,
        /// 25 s, the most a client may ask for; see ``EventSyncService/SyncService/Configuration/pullWaitLimit``).
        public var pullWaitLimit: Duration = SyncLimits.maxPullWait
        /// The logger (requests, store creation, epoch changes, shutdown); by default the task's
        /// current logger (`Logger.current`) when the configuration is made.
        public var logger = Logger.current
        /// Serve HTTPS with this certificate chain and private key instead of plain HTTP (see
        /// ``SyncServer/TLS``); `nil`, the default, serves plain HTTP, for a reverse proxy that
        /// terminates TLS in front of the server.
        public var tls: TLS? = nil
        /// Whether the server keeps metrics and serves them at `GET /metrics` in the Prometheus
        /// text format (on by default; see the *Deploying the sync server* article).
        public var metricsEnabled = true
        /// The bearer token `GET /metrics` requires; `nil`, the default, serves the metrics to
        /// anyone who reaches the port, so restrict `/metrics` at the proxy or firewall then. The
        /// store tokens never grant it, and it grants no store.
        public var metricsToken: String? = nil

        /// Creates a configuration.
        public init(backend: SyncBackend, host: String = "127.0.0.1", port: Int = 8080, tokens: TokenTable) {
            self.backend = backend
            self.host = host
            self.port = port
            self.tokens = tokens
        }

        /// Creates a configuration whose stores are LMDB environments under `dataDirectory`
        /// (created when missing).
        public init(dataDirectory: String, host: String = "127.0.0.1", port: Int = 8080, tokens: TokenTable) {
            self.init(backend: .lmdb(dataDirectory: dataDirectory), host: host, port: port, tokens: tokens)
        }

        /// Creates a configuration whose tokens come from a token file (see ``TokenTable``).
        ///
        /// - Throws: ``TokenTable/ParseError`` or the file system's error.
        public init(dataDirectory: String, host: String = "127.0.0.1", port: Int = 8080, tokensFile: String) throws {
            self.init(
                dataDirectory: dataDirectory, host: host, port: port, tokens: try TokenTable(contentsOfFile: tokensFile)
            )
        }
    }

    /// The configuration.
    public let configuration: Configuration

    private struct Binding {
        var port: Int?
        var finished = false
        var waiters: [CheckedContinuation<Int, any Error>] = []
    }

    private let binding = Mutex(Binding())

    /// The metrics `GET /metrics` serves, this server's own (`nil` when
    /// ``Configuration/metricsEnabled`` is off).
    let metrics: SyncMetrics?

    /// Creates a server; nothing happens until ``run()``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.metrics = configuration.metricsEnabled ? SyncMetrics() : nil
    }

    /// The configuration of the sync service behind the HTTP routes.
    var serviceConfiguration: SyncService.Configuration {
        var service = SyncService.Configuration(backend: configuration.backend)
        service.limits = configuration.limits
        service.storeConfiguration = configuration.storeConfiguration
        service.createsStoresOnPush = configuration.createsStoresOnPush
        service.trustsUnsignedMarks = configuration.trustsUnsignedMarks
        service.pullWaitLimit = configuration.pullWaitLimit
        service.logger = configuration.logger
        return service
    }

    /// Runs the server until a graceful shutdown (from the enclosing `ServiceGroup`) or
    /// cancellation, then closes the stores. A graceful shutdown first answers the live pulls
    /// that wait (``EventSyncService/SyncService/endLiveWaits()``), then stops accepting
    /// connections and lets the requests in flight finish.
    ///
    /// - Throws: ``EventSync/SyncError`` when the data directory cannot be used; the network's
    ///   error when the address cannot be bound.
    public func run() async throws {
        let service: SyncService
        let server: HTTPServerBuilder
        do {
            server = try httpServer()  // reads the TLS files, if any, before a store opens
            service = try SyncService(configuration: serviceConfiguration)
        } catch {
            finish(error)
            throw error
        }
        defer { service.close() }
        let logger = configuration.logger
        let configuration = self.configuration
        let router = SyncRoutes(
            service: service, tokens: configuration.tokens, limits: configuration.limits,
            bodyTimeout: configuration.bodyTimeout, metrics: metrics, metricsToken: configuration.metricsToken
        ).router()
        let app = Application(
            router: router,
            server: server,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "evstore"),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.notice(
                    "sync server listening",
                    metadata: [
                        "host": "\(configuration.host)", "port": "\(port)", "backend": "\(configuration.backend)",
                        "scheme": "\(configuration.tls == nil ? "http" : "https")",
                        "tokens": "\(configuration.tokens.count)",
                    ])
                didBind(port: port)
            },
            logger: logger)
        do {
            // The handler runs in this task's service group, so it does not depend on the task
            // locals reaching the request handlers through Hummingbird's own group.
            try await withGracefulShutdownHandler {
                try await app.run()
            } onGracefulShutdown: {
                service.endLiveWaits()
            }
        } catch {
            finish(error)
            throw error
        }
        logger.notice("sync server stopped")
        finish(SyncError(.unavailable, "the server stopped"))
    }

    /// Runs the server until SIGINT or SIGTERM, then shuts it down gracefully (``run()`` in a
    /// service group of its own).
    public func runService() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: [self], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger))
        try await group.run()
    }

    /// Waits until the server listens, and returns its port.
    ///
    /// - Throws: The error that stopped the server before it could listen.
    public func waitUntilRunning() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let port = binding.withLock { binding -> Int?? in
                if let port = binding.port { return .some(port) }
                if binding.finished { return .some(nil) }
                binding.waiters.append(continuation)
                return nil
            }
            switch port {
            case .some(.some(let port)): continuation.resume(returning: port)
            case .some(.none): continuation.resume(throwing: SyncError(.unavailable, "the server is not running"))
            case .none: break
            }
        }
    }

    /// The port the server listens on, once it does.
    public var port: Int? { binding.withLock { $0.port } }

    private func didBind(port: Int) {
        let waiters = binding.withLock { binding in
            binding.port = port
            defer { binding.waiters.removeAll() }
            return binding.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    private func finish(_ error: any Error) {
        let waiters = binding.withLock { binding in
            binding.finished = true
            binding.port = nil
            defer { binding.waiters.removeAll() }
            return binding.waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }
}
