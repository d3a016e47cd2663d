import EventStore

/// Where a ``SyncService`` keeps its stores: LMDB environments in a directory (the embedded
/// default), or a PostgreSQL database that several server instances share
/// (`SyncBackend.postgres(_:)`, in the `SyncPostgres` module).
///
/// ```swift
/// let service = try SyncService(configuration: .init(backend: .lmdb(dataDirectory: "/var/lib/evstore")))
/// ```
///
/// Both backends keep what sync needs — each store's log in server order, its epoch, the
/// digest of the log at every seq, replica owners and high-water marks — and answer the
/// protocol identically: the same seqs, digests and page checksums for the same pushes.
public struct SyncBackend: Sendable, CustomStringConvertible {
    /// Makes the storage for a service with this configuration.
    package let make: @Sendable (SyncService.Configuration) throws -> any SyncStorage
    /// What the backend is, for logs and ``InProcessTransport/remoteIdentifier``.
    public let description: String

    /// A backend made by `make`.
    package init(description: String, make: @escaping @Sendable (SyncService.Configuration) throws -> any SyncStorage) {
        self.description = description
        self.make = make
    }

    /// Each store is an ``EventStore/Store`` (an LMDB environment) in its own directory under
    /// `dataDirectory`, which is created when missing. Stores keep their items and search index,
    /// so every `evstore` command works on a server store; one process serves them.
    public static func lmdb(dataDirectory: String) -> SyncBackend {
        SyncBackend(description: "local:\(dataDirectory)") { configuration in
            try LMDBSyncStorage(dataDirectory: dataDirectory, configuration: configuration)
        }
    }
}
