import Crypto
import EventSync
import Hummingbird
import NIOCore

extension SyncRoutes {
    /// The media type of the Prometheus text format.
    static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `GET /metrics` and its methods, when the server keeps metrics.
    var metricsPaths: [(path: String, methods: [HTTPRequest.Method])] {
        metrics == nil ? [] : [("metrics", [.get])]
    }

    /// Adds `GET /metrics` (the Prometheus text format) when the server keeps metrics; with a
    /// metrics token, only a request bearing it gets them (401 otherwise).
    func addMetricsRoute(to router: Router<SyncRequestContext>) {
        guard let metrics else { return }
        let token = metricsToken
        router.get("metrics") { request, context in
            if let token, !SyncRoutes.bears(request, token) {
                return SyncRoutes.problem(
                    SyncError(.unauthorized, "/metrics needs Authorization: Bearer with the metrics token"),
                    requestID: context.requestID)
            }
            var headers = HTTPFields()
            headers[.contentType] = SyncRoutes.metricsContentType
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
    }

    /// Whether the request's `Authorization` is `Bearer token` (compared by digest, so the time
    /// taken does not tell how much of a guess was right).
    private static func bears(_ request: Request, _ token: String) -> Bool {
        guard let header = request.headers[.authorization] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return SHA256.hash(data: Array(parts[1].utf8)) == SHA256.hash(data: Array(token.utf8))
    }

    // MARK: Measured answers

    /// Answers `GET /v1/stores/{store}` with `answer`, and records the store's head.
    func measuredInfo(_ store: String, _ answer: () async throws -> [UInt8]) async throws -> [UInt8] {
        let body = try await answer()
        if let metrics, let info = try? RemoteInfo(json: body) { metrics.recordHead(info.head, of: store) }
        return body
    }

    /// Answers a push with `answer` (the body's upload included), and records its latency, its
    /// events and the store's head.
    func measuredPush(_ store: String, _ answer: () async throws -> [UInt8]) async throws -> [UInt8] {
        guard let metrics else { return try await answer() }
        let start = ContinuousClock.now
        let body = try await answer()
        if let response = try? PushResponse(json: body) {
            metrics.recordPush(
                store: store, accepted: response.accepted, duplicates: response.duplicates, head: response.head,
                duration: ContinuousClock.now - start)
        }
        return body
    }

    /// Answers a pull after `after` with `answer`, counting it among the open long-polls while a
    /// live one runs, and records its latency, its events and the store's head.
    func measuredPull(
        _ store: String, after: UInt64, live: Bool, _ answer: () async throws -> [UInt8]
    ) async throws -> [UInt8] {
        guard let metrics else { return try await answer() }
        let start = ContinuousClock.now
        let body = live ? try await metrics.longPoll(answer) : try await answer()
        if let tail = PageTail(page: body) {
            metrics.recordPull(
                store: store, events: tail.events(after: after), head: tail.head, live: live,
                duration: ContinuousClock.now - start)
        }
        return body
    }
}
