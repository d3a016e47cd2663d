import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel as ``SyncServer`` serves it: with a ``ConnectionCloseHandler``
/// after the HTTP/1 decoder, and a ``WriteTimeoutHandler`` first in the pipeline.
struct SyncHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    /// How long a response may make no progress before the connection is closed.
    let writeTimeout: TimeAmount

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(ConnectionCloseHandler(), position: .after(decoder))
            try pipeline.addHandler(WriteTimeoutHandler(timeout: writeTimeout, logger: logger), position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 as ``SyncServer`` serves it (see ``SyncHTTP1Channel``).
    static func syncHTTP1(configuration: HTTP1Channel.Configuration, writeTimeout: TimeAmount) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            SyncHTTP1Channel(
                base: HTTP1Channel(responder: responder, configuration: configuration), writeTimeout: writeTimeout)
        }
    }
}
