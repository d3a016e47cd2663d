import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Makes a request that does not keep its connection alive (HTTP/1.0 without
/// `Connection: keep-alive`, or any `Connection: close` spelling) end its connection after the
/// response.
///
/// Hummingbird 2 closes a connection only for a request header of exactly `connection: close`,
/// and the version-independent request it sees no longer says HTTP/1.0: without this handler an
/// HTTP/1.0 client's connection stays open until the idle timeout. The handler sits between the
/// HTTP/1 decoder and Hummingbird's codec, where the version is still known: it rewrites such a
/// request's `Connection` header to `close`, and says `Connection: close` in the response.
final class ConnectionCloseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Whether the request being answered ends the connection.
    private var closing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), !head.isKeepAlive else {
            context.fireChannelRead(data)
            return
        }
        closing = true
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard closing, case .head(var head) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}

@available(*, unavailable)
extension ConnectionCloseHandler: Sendable {}
