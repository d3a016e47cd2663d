import EventSync
public import EventSyncService
import Foundation

/// Where the PostgreSQL backend connects: a database that one or several `evstore serve`
/// processes share (see <doc:SyncPostgres>).
///
/// ```swift
/// let database = try PostgresBackend(url: "postgres://evstore:secret@db.internal:5432/evstore")
/// let server = SyncServer(configuration: .init(backend: .postgres(database), tokens: tokens))
/// ```
public struct PostgresBackend: Sendable, CustomStringConvertible {
    /// Whether connections use TLS.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never (`sslmode=disable`): loopback or a private network.
        case disable
        /// When the server offers it (`sslmode=prefer`, the default).
        case prefer
        /// Always (`sslmode=require`); a server without TLS is refused.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var username: String
    /// The role's password, if it needs one.
    public var password: String?
    /// The database holding the `evstore_` tables (created on first use).
    public var database: String
    /// The schema holding the tables (created on first use), or `nil` for the role's default
    /// (`public`). Several independent deployments can share one database, one schema each.
    public var schema: String?
    /// How long a request waits for the database (beyond a live pull's own wait) before it
    /// answers `503 unavailable`.
    public var requestTimeout: Duration = .seconds(10)
    /// Whether connections use TLS.
    public var tls: TLSMode = .prefer
    /// The most connections this process opens (one more is kept for `LISTEN`).
    public var maxConnections = 20

    /// Creates a backend description from its parts.
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// Reads a connection URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETERS]`
    /// (`postgresql://` too; user, password and database may be percent-encoded). Parameters:
    /// `sslmode=disable|prefer|require`, `schema=NAME` (lowercase letters, digits and `_`, at
    /// most 48, not starting with a digit), `request_timeout=SECONDS` (1–600).
    ///
    /// - Throws: ``PostgresBackend/URLError`` naming what is missing or unsupported.
    public init(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            ["postgres", "postgresql"].contains(scheme.lowercased())
        else { throw URLError("\(Self.redacted(url)) is not a postgres:// URL") }
        guard let host = components.host, !host.isEmpty else { throw URLError("\(Self.redacted(url)) names no host") }
        guard let user = components.user, !user.isEmpty else { throw URLError("\(Self.redacted(url)) names no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw URLError("\(Self.redacted(url)) names no database (postgres://USER@HOST:PORT/DATABASE)")
        }
        self.init(
            host: host, port: components.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.removingPercentEncoding ?? database)
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw URLError(
                        "sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")), not \(item.value ?? "nothing")"
                    )
                }
                tls = mode
            case "schema":
                guard let value = item.value, Self.isSchemaName(value) else {
                    throw URLError(
                        "schema must be 1–48 lowercase letters, digits or _, not starting with a digit, not \(item.value ?? "nothing")"
                    )
                }
                schema = value
            case "request_timeout":
                guard let value = item.value, let seconds = Int(value), (1...600).contains(seconds) else {
                    throw URLError("request_timeout must be 1–600 seconds, not \(item.value ?? "nothing")")
                }
                requestTimeout = .seconds(seconds)
            default:
                throw URLError(
                    "unknown connection parameter \(item.name.debugDescription) (known: sslmode, schema, request_timeout)"
                )
            }
        }
    }

    /// `postgres://USER@HOST:PORT/DATABASE` (with `?schema=NAME` when one is set), without the password.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)" + (schema.map { "?schema=\($0)" } ?? "")
    }

    /// Whether `name` is a schema name the backend accepts (so that it never needs quoting).
    static func isSchemaName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 48, !(first >= 0x30 && first <= 0x39) else { return false }
        return bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }

    /// `url` with its password replaced by `***`.
    private static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else {
            return url.debugDescription
        }
        components.password = "***"
        return (components.string ?? "").debugDescription
    }

    /// A connection URL that cannot be used.
    public struct URLError: Error, Sendable, CustomStringConvertible {
        /// What is wrong with it.
        public let description: String

        init(_ description: String) { self.description = description }
    }
}

extension SyncBackend {
    /// Stores kept in a PostgreSQL database that several server processes share: pushes on any
    /// of them are serialised per store by a row lock, and a push on one wakes live pulls on all
    /// of them (`LISTEN`/`NOTIFY`). The tables are created on first use.
    public static func postgres(_ backend: PostgresBackend) -> SyncBackend {
        postgres(partitions: [backend])
    }

    /// Stores spread over several PostgreSQL databases by name: each store lives in one of
    /// them, chosen by a fixed hash of its name, with every guarantee of ``postgres(_:)``.
    ///
    /// Each database records its place in the deployment on first use; a process given the
    /// databases in another order, or another number of them, is refused with an error on every
    /// request (nothing is written). A deployment keeps its number of databases: adding one would
    /// move stores between them, which is not supported.
    ///
    /// ```swift
    /// let databases = try ["postgres://evstore@db-a/evstore", "postgres://evstore@db-b/evstore"]
    ///     .map { try PostgresBackend(url: $0) }
    /// let service = try SyncService(configuration: .init(backend: .postgres(partitions: databases)))
    /// ```
    ///
    /// - Parameter partitions: The databases, at least one, always in the same order.
    public static func postgres(partitions: [PostgresBackend]) -> SyncBackend {
        let description = partitions.map(\.description).joined(separator: ", ")
        return SyncBackend(description: partitions.count == 1 ? description : "[\(description)]") { configuration in
            guard !partitions.isEmpty else { throw SyncError(.internalError, "no PostgreSQL database given") }
            let storages = partitions.enumerated().map { index, backend in
                PostgresSyncStorage(
                    backend: backend, partition: PostgresPartition(index: index, count: partitions.count),
                    configuration: configuration)
            }
            return storages.count == 1 ? storages[0] : PartitionedSyncStorage(storages)
        }
    }
}
