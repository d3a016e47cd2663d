public import AsyncHTTPClient
import EventStore
public import Logging
import NIOCore
public import NIOHTTP1
import ServiceLifecycle
public import SyncServer

/// A ``SyncServer`` on 127.0.0.1 with a system-chosen port and no log output, run in a service
/// group until ``stop()`` (graceful shutdown); and raw HTTP requests to it.
public final class RunningServer: Sendable {
    /// The server.
    public let server: SyncServer
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    /// The port it listens on.
    public let port: Int

    /// `http://127.0.0.1:PORT`, or `https://…` when the server serves TLS.
    public var baseURL: String { "\(server.configuration.tls == nil ? "http" : "https")://127.0.0.1:\(port)" }

    /// Starts a server with `configuration`, on loopback and a free port whatever it says, logging
    /// to `logger` (by default nowhere).
    public init(_ configuration: SyncServer.Configuration, logger: Logger? = nil) async throws {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.logger = logger ?? Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let group = ServiceGroup(
            services: [server], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        self.server = server
        self.group = group
        self.task = Task { try await group.run() }
        self.port = try await server.waitUntilRunning()
    }

    /// Shuts the server down gracefully and waits for it.
    public func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    /// An HTTP answer.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// The response headers.
        public var headers: HTTPHeaders
        /// The body.
        public var body: [UInt8]

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The problem's `code` and `detail`, when the body is a problem.
        public var problem: (code: String, detail: String)? {
            guard case .object(let members)? = try? Value(json: body),
                case .string(let code)? = members["code"], case .string(let detail)? = members["detail"]
            else { return nil }
            return (code, detail)
        }
    }

    /// Sends one request, with `Authorization: Bearer token` when a token is given and
    /// `Content-Type` when there is a body.
    public func send(
        _ method: HTTPMethod, _ path: String, token: String?, body: [UInt8]? = nil,
        contentType: String? = "application/json", headers: [(String, String)] = [], timeout: Duration = .seconds(30)
    ) async throws -> Reply {
        try await RunningServer.send(
            to: baseURL, method, path, token: token, body: body, contentType: contentType, headers: headers,
            timeout: timeout)
    }

    /// ``send(_:_:token:body:contentType:headers:timeout:)`` to any base URL (a stopped server's, say),
    /// through `client` (one that trusts a test certificate, say).
    public static func send(
        to baseURL: String, _ method: HTTPMethod, _ path: String, token: String?, body: [UInt8]? = nil,
        contentType: String? = "application/json", headers: [(String, String)] = [], timeout: Duration = .seconds(30),
        client: HTTPClient = .shared
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(timeout.components.seconds))
        let buffer = try await response.body.collect(upTo: 64 << 20)
        return Reply(
            status: Int(response.status.code), headers: response.headers, body: Array(buffer.readableBytesView))
    }
}
