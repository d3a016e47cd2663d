import EventStore
package import EventSync
package import EventSyncService
import SyncPostgres

/// A store the sync server keeps in PostgreSQL (`evstore dump|verify NAME --postgres URL`). That
/// backend keeps the log and the sync state only, no items or search index, so the tool reads
/// it through the sync service, as a client would: the commands that make sense on the log —
/// `dump --events`, `dump --meta`, `verify` — work on it; the others need a store with
/// projections (`evstore sync` pulls the log into one).
///
/// ```swift
/// let server = try ServerStoreAccess.postgres(url: "postgres://evstore@db/evstore", store: "notes")
/// defer { server.close() }
/// let info = try await server.info()
/// ```
package struct ServerStoreAccess: Sendable {
    /// The service reading the backend.
    package let service: SyncService
    /// The store's name on the server.
    package let name: String

    /// Opens store `name` of the PostgreSQL database at `url`.
    ///
    /// - Throws: A usage error for an unusable URL or store name.
    package static func postgres(url: String, store name: String) throws -> ServerStoreAccess {
        try postgres(urls: [url], store: name)
    }

    /// Opens store `name` of a deployment on the PostgreSQL databases at `urls` (several: the
    /// stores are spread over them by name; give them in the deployment's order).
    ///
    /// - Throws: A usage error for an unusable URL or store name.
    package static func postgres(urls: [String], store name: String) throws -> ServerStoreAccess {
        guard StoreName.isValid(name) else {
            throw ToolError.usage(
                "\(name.debugDescription) is not a store name (with --postgres, give the store's name)")
        }
        let backends = try ServerSetup.postgresBackends(urls)
        return ServerStoreAccess(
            service: try SyncService(configuration: .init(backend: .postgres(partitions: backends))), name: name)
    }

    /// The store's head, epoch and log digest.
    ///
    /// - Throws: ``ToolError`` when the store is missing or the database cannot be read.
    package func info() async throws -> RemoteInfo {
        do {
            return try await service.info(store: name)
        } catch {
            throw ToolError("cannot read store \(name.debugDescription) on \(service.configuration.backend): \(error)")
        }
    }

    /// Calls `body` with every page of the log after `after`, in order, until it returns `false`.
    ///
    /// - Throws: ``ToolError`` when the database cannot be read, or what `body` throws.
    package func forEachPage(after: UInt64 = 0, _ body: (PullPage) throws -> Bool) async throws {
        var after = after
        while true {
            let page: PullPage
            do {
                page = try await service.pull(store: name, after: after, limit: 1000)
            } catch {
                throw ToolError(
                    "cannot read store \(name.debugDescription) on \(service.configuration.backend): \(error)")
            }
            guard try body(page), page.next < page.head, page.next > after else { return }
            after = page.next
        }
    }

    /// Closes the connections.
    package func close() { service.close() }
}
