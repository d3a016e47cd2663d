import Hummingbird

/// The request context of the sync routes: Hummingbird's core context plus the request id
/// (set by ``RequestLogMiddleware``, sent back in `x-request-id` and in problem responses).
struct SyncRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var requestID = ""

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
