import EventStore
import EventSync
import EventSyncService
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// The HTTP routes of protocol v1; each one authorizes, then hands over to ``SyncService``.
struct SyncRoutes: Sendable {
    let service: SyncService
    let tokens: TokenTable
    let limits: SyncLimits
    let bodyTimeout: Duration
    /// The metrics to keep and serve at `GET /metrics` (none: no `/metrics`).
    var metrics: SyncMetrics? = nil
    /// The bearer token `GET /metrics` needs (none: it is open).
    var metricsToken: String? = nil

    func router() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        if let metrics { router.add(middleware: MetricsMiddleware(metrics: metrics)) }
        router.add(middleware: RequestLogMiddleware())
        router.get("healthz") { _, _ in
            SyncRoutes.json(Array(#"{"status":"ok"}"#.utf8))
        }
        router.get("openapi.json") { _, context in
            guard let document = OpenAPIDocument.bytes else {
                return SyncRoutes.problem(
                    SyncError(.internalError, "the OpenAPI document is not installed beside the executable"),
                    requestID: context.requestID)
            }
            return SyncRoutes.json(document)
        }
        addMetricsRoute(to: router)
        router.get("v1/stores/:store") { request, context in
            await handle(request, context, query: ["replica"]) { store, check, _ in
                var replica: ReplicaID?
                if let text = request.uri.queryParameters.get("replica") {
                    guard let parsed = ReplicaID(hex: text) else {
                        throw SyncError(.invalidRequest, "\"replica\" must be a replica id (32 hex digits)")
                    }
                    replica = parsed
                }
                return SyncRoutes.json(
                    try await measuredInfo(store) {
                        try await service.infoJSON(store, check: check, replica: replica, logger: context.logger)
                    })
            }
        }
        router.get("v1/stores/:store/events") { request, context in
            await handle(request, context, query: ["after", "limit", "wait"]) { store, check, _ in
                let query = request.uri.queryParameters
                var after: UInt64 = 0
                if let text = query.get("after") {
                    guard let value = SyncService.decimal(text), value <= Int64.max else {
                        throw SyncError(.invalidRequest, "\"after\" must be a server seq (0 to 2^63 − 1)")
                    }
                    after = value
                }
                var limit: Int?
                if let text = query.get("limit") {
                    guard let value = SyncService.decimal(text), value >= 1, value <= Int.max else {
                        throw SyncError(.invalidRequest, "\"limit\" must be a positive integer")
                    }
                    limit = Int(value)
                }
                var wait = Duration.zero
                if let text = query.get("wait") {
                    let most = SyncService.maxPullWait.components.seconds
                    guard let value = SyncService.decimal(text), value <= UInt64(most), case let seconds = Int64(value)
                    else {
                        throw SyncError(.invalidRequest, "\"wait\" must be a whole number of seconds from 0 to \(most)")
                    }
                    wait = .seconds(seconds)
                }
                // A graceful shutdown ends the wait (SyncService.endLiveWaits): the page then
                // holds what the store has.
                return SyncRoutes.json(
                    try await measuredPull(store, after: after, live: wait > .zero) {
                        try await service.pullJSON(
                            store, after: after, limit: limit, check: check, wait: wait, logger: context.logger)
                    })
            }
        }
        router.post("v1/stores/:store/events") { request, context in
            await handle(request, context, query: []) { store, check, credential in
                return SyncRoutes.json(
                    try await measuredPush(store) {
                        let body = try await readBody(request)
                        return try await service.pushJSON(
                            store, body: body, check: check, credential: credential, logger: context.logger)
                    })
            }
        }
        for (path, allowed) in SyncRoutes.paths + metricsPaths {
            for method in SyncRoutes.methods where !allowed.contains(method) {
                router.on(RouterPath(path), method: method) { request, context in
                    SyncRoutes.methodNotAllowed(request, allowed: allowed, requestID: context.requestID)
                }
            }
        }
        return router
    }

    /// The paths of protocol v1 and the methods each one has (the `paths` of `openapi.json`).
    static let paths: [(path: String, methods: [HTTPRequest.Method])] = [
        ("healthz", [.get]),
        ("openapi.json", [.get]),
        ("v1/stores/:store", [.get]),
        ("v1/stores/:store/events", [.get, .post]),
    ]

    /// The methods of HTTP (RFC 9110, PATCH and QUERY) that a path answers with 405 when it does not
    /// have them. (CONNECT names no path.)
    static let methods: [HTTPRequest.Method] =
        [.get, .head, .post, .put, .delete, .options, .trace, .patch] + [HTTPRequest.Method("QUERY")].compactMap { $0 }

    /// 405 `method-not-allowed`, with the methods the path has in `Allow`.
    static func methodNotAllowed(_ request: Request, allowed: [HTTPRequest.Method], requestID: String) -> Response {
        let code = SyncError.Code(name: "method-not-allowed", status: 405)
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        var response = problem(
            SyncError(code, "\(request.method) \(request.uri.path): the path has \(allow)"), requestID: requestID)
        response.headers[.allow] = allow
        return response
    }

    /// The query parameters of the continuity check, which every store path takes.
    static let continuityParameters: Set<String> = ["epoch", "mark", "digest", "signature"]

    /// Authorizes the request for its store, refuses query parameters other than the path's
    /// (`query`) and the continuity check's, reads the continuity check, runs `body`, and turns
    /// every error into a problem response.
    private func handle(
        _ request: Request, _ context: SyncRequestContext, query names: Set<String>,
        _ body: (_ store: String, _ check: ContinuityCheck?, _ credential: SyncCredential) async throws -> Response
    ) async -> Response {
        do {
            let (store, credential) = try authorize(request, context)
            let query = request.uri.queryParameters
            for (name, _) in query
            where !names.contains(String(name)) && !Self.continuityParameters.contains(String(name)) {
                let taken = (names.sorted() + Self.continuityParameters.sorted()).joined(separator: ", ")
                throw SyncError(
                    .invalidRequest,
                    "unknown query parameter \(String(name).debugDescription); this path takes \(taken)")
            }
            let check = try SyncService.continuityCheck(
                epoch: query.get("epoch"), mark: query.get("mark"), digest: query.get("digest"),
                signature: query.get("signature"))
            return try await body(store, check, credential)
        } catch {
            let failure = SyncService.syncError(error)
            // Only the server's own faults are errors; a client's (4xx) must not flood the error log.
            context.logger.log(
                level: failure.code.status >= 500 ? .error : .info, "request refused",
                metadata: ["problem": "\(failure.code)", "detail": "\(failure.message)"])
            var response = SyncRoutes.problem(failure, requestID: context.requestID)
            // After broken framing the connection cannot carry another request.
            if failure.cause is HTTPParserError { response.headers[.connection] = "close" }
            return response
        }
    }

    /// 401 without a known token, 400 for an invalid store name, 403 when the token does not
    /// grant the store. Returns the store and the token's credential.
    private func authorize(_ request: Request, _ context: SyncRequestContext) throws -> (String, SyncCredential) {
        guard let header = request.headers[.authorization] else {
            throw SyncError(.unauthorized, "missing Authorization: Bearer token")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw SyncError(.unauthorized, "the Authorization header must be `Bearer TOKEN`")
        }
        let token = String(parts[1].filter { !$0.isWhitespace })
        guard let grant = tokens.grant(for: token) else { throw SyncError(.unauthorized, "unknown token") }
        let store = context.parameters.get("store") ?? ""
        try StoreName.validate(store)
        guard grant.allows(store) else {
            throw SyncError(.forbidden, "the token does not grant store \(store.debugDescription)")
        }
        return (store, tokens.credential(for: token))
    }

    /// Collects the body, refusing anything but `application/json` (415) and more than the limit
    /// (413) before reading it all.
    private func readBody(_ request: Request) async throws -> [UInt8] {
        let declared = request.headers[.contentType] ?? ""
        let mediaType = declared.split(separator: ";", maxSplits: 1).first.map {
            String($0.filter { $0 != " " && $0 != "\t" }).lowercased()
        }
        guard mediaType == "application/json" else {
            throw SyncError(
                .unsupportedMediaType,
                declared.isEmpty
                    ? "a push needs Content-Type: application/json" : "Content-Type \(declared) is not application/json"
            )
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limits.maxRequestBytes {
            throw SyncError(.payloadTooLarge, "request body of \(length) bytes (limit \(limits.maxRequestBytes))")
        }
        do {
            let (body, maxBytes, timeout) = (request.body, limits.maxRequestBytes, bodyTimeout)
            let buffer = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                group.addTask { try await body.collect(upTo: maxBytes) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            guard let buffer else { throw SyncError(.requestTimeout, "the request body took longer than \(timeout)") }
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw SyncError(.payloadTooLarge, "request body larger than \(limits.maxRequestBytes) bytes")
        } catch let error as HTTPParserError {
            // Bad chunk framing, or the connection ended before the body did (the client half-closed,
            // or the server closed a stalled connection at the idle timeout): the client's fault.
            throw SyncError(.malformedBody, "the request body's HTTP framing is invalid: \(error)", cause: error)
        } catch let error as ChannelError {
            throw SyncError(.malformedBody, "the connection failed while the request body was read", cause: error)
        } catch let error as IOError {
            throw SyncError(.malformedBody, "the connection failed while the request body was read", cause: error)
        }
    }

    /// The size of the pieces a JSON answer is written in: each piece that reaches the client
    /// is progress for ``WriteTimeoutHandler``.
    static let responseChunkBytes = 64 << 10

    static func json(_ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        // One piece goes out with the head, in one write.
        guard bytes.count > responseChunkBytes else {
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        // Written and flushed one by one: handed over together, TLS would encrypt them into
        // one write, which reaches the socket only whole.
        let body = ResponseBody(contentLength: bytes.count) { writer in
            for start in stride(from: 0, to: bytes.count, by: responseChunkBytes) {
                try await writer.write(ByteBuffer(bytes: bytes[start..<min(start + responseChunkBytes, bytes.count)]))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    static func problem(_ error: SyncError, requestID: String?) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if error.code == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"evstore\"" }
        let status = error.code.status > 0 ? error.code.status : 500
        return Response(
            status: HTTPResponse.Status(code: status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: error.problemJSON(requestID: requestID))))
    }
}
