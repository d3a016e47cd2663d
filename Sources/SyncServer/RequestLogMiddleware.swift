import EventSync
import Hummingbird
import Logging

/// Logs every request (method, path, status, duration) with its request id, sends the id back
/// in `x-request-id`, and answers unknown routes with a problem response.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = SyncRequestContext

    static var requestIDField: HTTPFields.Element.Name { HTTPFields.Element.Name("x-request-id")! }

    @concurrent
    func handle(
        _ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let requestID = RequestLogMiddleware.requestID(request, context)
        var context = context
        context.requestID = requestID
        context.logger[metadataKey: "request-id"] = .string(requestID)
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            let code = SyncError.Code(
                name: error.status.code == 404 ? "route-not-found" : "http-\(error.status.code)",
                status: error.status.code)
            response = SyncRoutes.problem(
                SyncError(code, "\(request.method) \(request.uri.path): \(error.status.reasonPhrase)"),
                requestID: requestID)
        }
        response.headers[RequestLogMiddleware.requestIDField] = requestID
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                "ms": "\(Int(milliseconds.rounded()))",
            ])
        return response
    }

    /// The client's `x-request-id` when it is short and plain, else Hummingbird's id, else a new one.
    static func requestID(_ request: Request, _ context: Context) -> String {
        if let given = request.headers[requestIDField], (1...64).contains(given.utf8.count),
            given.utf8.allSatisfy({
                $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A)
            })
        {
            return given
        }
        if let id = context.logger[metadataKey: "hb.request.id"] { return "\(id)" }
        return String(UInt64.random(in: 0 ... .max), radix: 16)
    }
}
