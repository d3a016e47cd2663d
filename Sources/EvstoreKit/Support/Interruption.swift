import Foundation

/// Waiting for the user to stop a long-running command (Ctrl-C, or SIGTERM from a supervisor).
package enum Interruption {
    /// Returns when the process receives SIGINT or SIGTERM; until then those signals no longer
    /// end the process, so the command can stop cleanly (finish a commit, close the store).
    package static func wait() async {
        let signals = [SIGINT, SIGTERM]
        let received = AsyncStream<Void> { continuation in
            // Dispatch sources are thread-safe; their protocol is not marked Sendable.
            nonisolated(unsafe) let sources = signals.map { number -> any DispatchSourceSignal in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield() }
                source.resume()
                return source
            }
            continuation.onTermination = { _ in
                for source in sources { source.cancel() }
            }
        }
        for await _ in received { return }
    }
}
