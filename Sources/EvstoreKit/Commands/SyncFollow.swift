import AsyncHTTPClient
package import EventStore
import EventSync
import Foundation

/// `evstore sync --follow`: keeps a store in sync with a sync server until interrupted.
package enum SyncFollow {
    /// Runs automatic sync of `store` with the server at `remote` (its store `storeName`) — local
    /// changes pushed as they commit, other replicas' changes pulled as they reach the server
    /// (live pulls), failures retried with backoff — until `stop` returns, then stops after the
    /// running sync and prints nothing more.
    ///
    /// Prints one line each time a sync ends: table, `up to date: this store has N events,
    /// nothing waits to sync` (or the failure and its retry); JSON line, `{"phase", "head",
    /// "pending_items", "error", "retry_at"}` with `phase` one of `up-to-date`, `failed`,
    /// `offline`, `pull-held`.
    package static func run(
        store: Store, remote: String, token: String?, storeName: String, timeout: Duration = .seconds(60),
        format: OutputFormat, output: Output, until stop: () async -> Void
    ) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let synchronizer = Synchronizer(
            store: store,
            transport: HTTPTransport(
                baseURL: remote, token: token, storeName: storeName, httpClient: client, timeout: timeout))
        let printer = Task {
            for await status in synchronizer.status {
                guard let line = line(for: status, store: store, format: format) else { continue }
                output.line(line)
            }
        }
        synchronizer.start()
        await stop()
        await synchronizer.stop()
        printer.cancel()
        try? await client.shutdown()
    }

    /// The line for a status that ends a sync, or `nil` for one that does not.
    static func line(for status: SyncStatus, store: Store, format: OutputFormat) -> String? {
        let head = (try? store.head()) ?? 0
        let phase: String
        var error: String?
        var retryAt: Date?
        switch status.phase {
        case .upToDate: phase = "up-to-date"
        case .failed(let failure, let retry):
            phase = "failed"
            error = SyncOnce.describe(failure)
            retryAt = retry
        case .offline: phase = "offline"
        case .pullHeld: phase = "pull-held"
        case .idle, .pushing, .pulling: return nil
        }
        switch format {
        case .jsonl:
            var fields: [String: Value] = [
                "phase": .string(phase), "head": .int(Int64(head)), "pending_items": .int(Int64(status.pendingItems)),
            ]
            if let error { fields["error"] = .string(error) }
            if let retryAt { fields["retry_at"] = .string(retryAt.formatted(.iso8601)) }
            return Rendering.jsonLine(fields)
        case .table:
            let pending = status.pendingItems == 0 ? "nothing waits to sync" : status.pendingDescription
            switch status.phase {
            case .failed:
                return "sync failed: \(error ?? "")" + (retryAt.map { "; retrying at \($0.formatted(.iso8601))" } ?? "")
            default:
                return "\(phase.replacingOccurrences(of: "-", with: " ")): this store has \(head) events, \(pending)"
            }
        }
    }
}
