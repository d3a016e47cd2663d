/// The sync server's storage backends that scenario 10 measures side by side.
enum ServerBackend: String, CaseIterable, Sendable {
    /// One LMDB environment per store under a data directory (the default; one process).
    case lmdb
    /// A PostgreSQL database that several server instances share (`SyncPostgres`).
    case postgres

    /// The backend's name in the report.
    var title: String {
        switch self {
        case .lmdb: "LMDB"
        case .postgres: "PostgreSQL"
        }
    }
}
