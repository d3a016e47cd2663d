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

/// Hummingbird's HTTP/1 channel with a ``ConnectionCloseHandler`` after the HTTP/1 decoder.
struct SyncHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(ConnectionCloseHandler(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 as ``SyncServer`` serves it: Hummingbird's HTTP/1 channel that also ends the
    /// connections of requests that do not keep them alive (see ``ConnectionCloseHandler``).
    static func syncHTTP1(configuration: HTTP1Channel.Configuration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            SyncHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration))
        }
    }
}
