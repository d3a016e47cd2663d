import Logging
import NIOCore

/// Closes a connection whose response makes no progress: a client that stops reading (or never
/// reads) would otherwise hold its connection, its request's task and the response's bytes for
/// as long as it likes. See ``SyncServer/Configuration/writeTimeout``.
///
/// Progress is a write reaching the socket: the handler sits first in the pipeline, where each
/// write is a piece of the encoded response, and a response body goes out in pieces of
/// ``SyncRoutes/responseChunkBytes``, so a slow client that keeps reading keeps its connection.
/// A connection with nothing to write (a live pull waiting for an event) has no such deadline.
final class WriteTimeoutHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let timeout: TimeAmount
    private let logger: Logger
    /// The writes not yet on the socket.
    private var pending = 0
    /// When the last write reached the socket, or when writes began to wait.
    private var lastProgress = NIODeadline.now()
    private var check: Scheduled<Void>?

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let promise = promise ?? context.eventLoop.makePromise()
        if pending == 0 { lastProgress = .now() }
        pending += 1
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in
            pending -= 1
            lastProgress = .now()
        }
        context.write(data, promise: promise)
        scheduleCheck(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    /// Checks, when the timeout could have passed, whether writes still wait without progress.
    private func scheduleCheck(_ context: ChannelHandlerContext) {
        guard check == nil, pending > 0 else { return }
        check = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastProgress + timeout) { [self] in
            check = nil
            guard pending > 0, context.channel.isActive else { return }
            guard NIODeadline.now() - lastProgress >= timeout else {
                scheduleCheck(context)
                return
            }
            logger.info(
                "closing a connection whose response made no progress",
                metadata: [
                    "remote": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")", "timeout": "\(timeout)",
                ])
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension WriteTimeoutHandler: Sendable {}
