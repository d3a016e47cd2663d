import AsyncHTTPClient
package import EventStore
package import EventSync
import Foundation

/// `evstore sync`: one sync of a store with a sync server, with push and pull progress bars.
package enum SyncOnce {
    /// Syncs `store` once with the server at `remote` (its store `storeName`) and prints what
    /// moved.
    ///
    /// JSON line: `{"pushed", "pulled", "duplicates", "conflicts", "server_head", "epoch_changed",
    /// "replica", "restamped", "head"}` — `replica` is the id the store writes under after the
    /// sync, `restamped` how many of its events moved to a new id because the store had reused
    /// ids published elsewhere (a restored backup, a copied store).
    ///
    /// A refused or unreachable server fails at once (no retries: this is one sync, run by a
    /// person or a script); `timeout` bounds each request.
    @discardableResult
    package static func run(
        store: Store, remote: String, token: String?, storeName: String, timeout: Duration = .seconds(60),
        format: OutputFormat, output: Output
    ) async throws -> SyncReport {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let synchronizer = Synchronizer(
            store: store,
            transport: HTTPTransport(
                baseURL: remote, token: token, storeName: storeName, httpClient: client, timeout: timeout))
        let push = ProgressBar("push")
        let pull = ProgressBar("pull")
        let watcher = Task {
            for await status in synchronizer.status {
                switch status.phase {
                case .pushing(let progress): push.update(UInt64(progress.completed), of: UInt64(progress.total))
                case .pulling(let progress): pull.update(UInt64(progress.completed), of: UInt64(progress.total))
                default: break
                }
            }
        }
        defer { watcher.cancel() }
        let report: SyncReport
        do {
            report = try await synchronizer.sync()
            try? await client.shutdown()
        } catch let error as SyncError {
            try? await client.shutdown()
            push.finish()
            pull.finish()
            throw ToolError("sync with \(remote) failed: \(describe(error))")
        } catch {
            try? await client.shutdown()
            throw error
        }
        push.finish()
        pull.finish()
        let head = try store.head()
        switch format {
        case .jsonl:
            output.line(
                Rendering.jsonLine([
                    "pushed": .int(Int64(report.pushed)), "pulled": .int(Int64(report.pulled)),
                    "duplicates": .int(Int64(report.duplicates)), "conflicts": .int(Int64(report.conflicts)),
                    "server_head": .int(Int64(report.serverHead)), "epoch_changed": .bool(report.epochChanged),
                    "replica": .string(store.replicaID.description),
                    "restamped": .int(Int64(report.replicaChanges.reduce(0) { $0 + $1.restamped.count })),
                    "head": .int(Int64(head)),
                ]))
        case .table:
            output.line(
                "pushed \(report.pushed), pulled \(report.pulled), duplicates \(report.duplicates), conflicts \(report.conflicts); "
                    + "the server log has \(report.serverHead) events, this store \(head)")
            if report.epochChanged {
                output.line(
                    "the server's log no longer held what this store saw (it was restored or reset): positions were "
                        + "reset and everything synced again")
            }
            for change in report.replicaChanges {
                output.line(
                    "this store reused replica ids published elsewhere (restored from a backup, or copied?): it now writes "
                        + "under \(change.current); \(change.restamped.count) unpublished events moved to \(change.restampedUnder)"
                )
            }
            let names = ReplicaNames(local: store.replicaID)
            for record in report.conflictRecords.prefix(20) {
                output.line(
                    "  conflict \(record.collection)/\(record.item) · \(record.field): "
                        + "\(Rendering.text(record.winner.value)) (\(names.event(record.winner.event))) "
                        + "won over \(Rendering.text(record.loser.value)) (\(names.event(record.loser.event)))")
            }
            if report.conflictRecords.count > 20 { output.line("  … see `evstore dump --conflicts`") }
        }
        return report
    }

    /// A sync error in one line: the message, then the network's reason in plain words.
    static func describe(_ error: SyncError) -> String {
        guard let cause = error.cause else { return error.message }
        let text = "\(cause)"
        if text.localizedCaseInsensitiveContains("refused") {
            return "\(error.message): connection refused (is the server running?)"
        }
        if text.localizedCaseInsensitiveContains("timeout") || text.localizedCaseInsensitiveContains("timed out") {
            return "\(error.message): timed out"
        }
        return "\(error.message): \(text)"
    }
}
