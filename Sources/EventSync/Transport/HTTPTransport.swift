public import AsyncHTTPClient
public import EventStore
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A transport that speaks protocol v1 over HTTP/JSON (async-http-client).
///
/// ```swift
/// let transport = HTTPTransport(baseURL: "https://sync.example.com", token: "s3cret", storeName: "notes")
/// let report = try await Synchronizer(store: store, transport: transport).sync()
/// ```
///
/// Problem responses become ``SyncError``s with the server's code, detail and request id;
/// connection failures become ``SyncError/Code/transport``.
public struct HTTPTransport: SyncTransport {
    /// The server's base URL, without a trailing slash.
    public let baseURL: String
    /// The bearer token, if any.
    public let token: String?
    /// The store's name on the server.
    public let storeName: String
    /// The client used for requests.
    public let httpClient: HTTPClient
    /// The deadline of each request.
    public let timeout: Duration
    /// The largest response body accepted.
    public var maxResponseBytes = 256 << 20

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - baseURL: The server, such as `http://127.0.0.1:8080`.
    ///   - token: The bearer token (`Authorization: Bearer TOKEN`).
    ///   - storeName: The store's name on the server.
    ///   - httpClient: The HTTP client (the shared one by default).
    ///   - timeout: The deadline of each request.
    public init(
        baseURL: String, token: String?, storeName: String, httpClient: HTTPClient = .shared,
        timeout: Duration = .seconds(60)
    ) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.token = token
        self.storeName = storeName
        self.httpClient = httpClient
        self.timeout = timeout
    }

    /// `<baseURL>/v1/stores/<store>`.
    public var remoteIdentifier: String { storeURL }

    private var storeURL: String {
        "\(baseURL)/v1/stores/\(storeName.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? storeName)"
    }

    /// `GET /v1/stores/{store}` (with `?replica=` when `replica` is given).
    public func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
        let items = replica.map { [("replica", $0.description)] } ?? []
        return try RemoteInfo(json: try await send(.GET, storeURL + query(check: check, items)))
    }

    /// `POST /v1/stores/{store}/events`.
    public func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
        try PushResponse(
            json: try await send(.POST, storeURL + "/events" + query(check: check, []), body: request.jsonBytes()))
    }

    /// `GET /v1/stores/{store}/events?after=SEQ&limit=N`.
    public func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
        try await pull(after: after, limit: limit, check: check, wait: .zero)
    }

    /// `true`: pulls can wait on the server.
    public var supportsLivePull: Bool { true }

    /// A live pull (`wait=SECONDS`, whole seconds, at most ``SyncLimits/maxPullWait``); the
    /// request's deadline is the wait plus ``timeout``.
    public func pull(after: UInt64, limit: Int, check: ContinuityCheck?, wait: Duration) async throws -> PullPage {
        var items = [("after", String(after)), ("limit", String(limit))]
        let seconds = min(max(wait.components.seconds, 0), SyncLimits.maxPullWait.components.seconds)
        if seconds > 0 { items.append(("wait", String(seconds))) }
        let url = storeURL + "/events" + query(check: check, items)
        return try PullPage(json: try await send(.GET, url, timeout: timeout + .seconds(seconds)))
    }

    private func query(check: ContinuityCheck?, _ items: [(String, String)]) -> String {
        var items = items
        if let check {
            items += [("epoch", check.epoch), ("mark", String(check.seq)), ("digest", check.digest.description)]
            if let signature = check.signature { items.append(("signature", signature.description)) }
        }
        guard !items.isEmpty else { return "" }
        return "?"
            + items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0.1)" }
            .joined(separator: "&")
    }

    private func send(_ method: HTTPMethod, _ url: String, body: [UInt8]? = nil, timeout: Duration? = nil) async throws
        -> [UInt8]
    {
        let timeout = timeout ?? self.timeout
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let status: Int
        let bytes: [UInt8]
        let requestID: String?
        do {
            let components = timeout.components
            let nanoseconds = components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
            let response = try await httpClient.execute(request, timeout: .nanoseconds(nanoseconds))
            status = Int(response.status.code)
            requestID = response.headers.first(name: "x-request-id")
            let buffer = try await response.body.collect(upTo: maxResponseBytes)
            bytes = Array(buffer.readableBytesView)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.transport, "\(method) \(url) failed", cause: error)
        }
        guard (200..<300).contains(status) else {
            if var problem = SyncError(problemJSON: bytes, status: status) {
                if problem.requestID == nil { problem.requestID = requestID }
                throw problem
            }
            throw SyncError(
                SyncError.Code(name: "http-\(status)", status: status), "\(method) \(url): HTTP \(status)",
                requestID: requestID)
        }
        return bytes
    }
}
