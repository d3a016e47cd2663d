public import EventSyncService
import SyncPostgres

/// Which storage backend a sync test runs its server on; suites that must hold on both take
/// ``all`` as their arguments.
public enum TestBackend: String, Sendable, CustomStringConvertible {
    /// LMDB stores in a data directory.
    case lmdb
    /// A fresh PostgreSQL database (see ``TestPostgres``).
    case postgres

    /// LMDB, and PostgreSQL when ``TestPostgres/isEnabled``.
    public static var all: [TestBackend] { TestPostgres.isEnabled ? [.lmdb, .postgres] : [.lmdb] }

    /// The backend's name (`lmdb`, `postgres`), as test names show it.
    public var description: String { rawValue }

    /// A backend of this kind: LMDB under `dataDirectory`, or a new PostgreSQL database.
    public func make(dataDirectory: String) async throws -> SyncBackend {
        switch self {
        case .lmdb: .lmdb(dataDirectory: dataDirectory)
        case .postgres: .postgres(try await TestPostgres.freshDatabase())
        }
    }
}
