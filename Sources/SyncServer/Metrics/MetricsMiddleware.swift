import Hummingbird

/// Counts every answered request in `evstore_http_requests_total` by route template, method and
/// status (see ``SyncMetrics``).
///
/// The route is the template the router matched (`/v1/stores/{store}/events`), never the raw
/// path, and the method is one of HTTP's or `other`, so that neither store names nor made-up
/// paths and methods can grow the number of series. Requests that match no route count under
/// `unmatched`. The middleware is the outermost one: it sees the response
/// ``RequestLogMiddleware`` makes of an error.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    let metrics: SyncMetrics

    /// The methods counted by name; any other is `other`.
    static let methods: Set<String> = Set(SyncRoutes.methods.map(\.rawValue) + ["CONNECT"])

    @concurrent
    func handle(
        _ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            let response = try await next(request, context)
            count(request, context, status: response.status.code)
            return response
        } catch {
            count(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }

    private func count(_ request: Request, _ context: Context, status: Int) {
        // The router stores the matched template in the context it shares with the middleware.
        let route = context.endpointPath.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "unmatched"
        let method = MetricsMiddleware.methods.contains(request.method.rawValue) ? request.method.rawValue : "other"
        metrics.countRequest(route: route, method: method, status: status)
    }
}
