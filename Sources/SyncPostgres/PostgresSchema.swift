import EventSync
import Logging
import PostgresNIO

/// The backend's tables, created on first use by whichever server process comes first (under a
/// transaction-scoped advisory lock, so that processes starting together do not race):
///
/// - `evstore_stores`: one row per store — its epoch, its head seq and the log digest at the
///   head. Every push locks its store's row (`SELECT … FOR UPDATE`) until it commits.
/// - `evstore_events`: the logs — per store and seq, the event's origin replica (two 64-bit
///   halves), its origin sequence (unique per store and origin: pushes are idempotent across
///   instances), the log digest through it, and its canonical binary encoding.
/// - `evstore_replicas`: per store and replica id — its owner, its high-water mark, and what its
///   owner last declared it holds (with the epoch it was declared in).
/// - `evstore_schema`: the version of this layout.
enum PostgresSchema {
    /// The layout version this code writes.
    static let version: Int32 = 1
    /// The advisory lock key held while the tables are created.
    static let migrationLock: Int64 = 0x6576_7374_6f72_6531
    /// The channel a push notifies with its store's name: one per schema, so that deployments
    /// sharing a database do not wake each other's pulls.
    static func channel(schema: String?) -> String {
        "evstore_events" + (schema.map { "." + $0 } ?? "")
    }

    static let statements: [PostgresQuery] = [
        """
        CREATE TABLE IF NOT EXISTS evstore_schema (version integer NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS evstore_stores (
            name text PRIMARY KEY,
            epoch text NOT NULL,
            head bigint NOT NULL DEFAULT 0,
            head_digest bigint NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS evstore_events (
            store text NOT NULL,
            seq bigint NOT NULL,
            origin_high bigint NOT NULL,
            origin_low bigint NOT NULL,
            origin_seq bigint NOT NULL,
            digest bigint NOT NULL,
            body bytea NOT NULL,
            PRIMARY KEY (store, seq),
            UNIQUE (store, origin_high, origin_low, origin_seq)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS evstore_replicas (
            store text NOT NULL,
            replica text NOT NULL,
            owner text NOT NULL DEFAULT '',
            high_water bigint NOT NULL DEFAULT 0,
            declared_epoch text NOT NULL DEFAULT '',
            declared bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (store, replica)
        )
        """,
    ]

    /// Creates the tables when missing and checks the layout version.
    ///
    /// - Throws: ``EventSync/SyncError/Code/internalError`` for a database written by a newer version.
    static func prepare(_ client: PostgresClient, schema: String?, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            if let schema {
                // The name is checked (PostgresBackend.isSchemaName): it needs no quoting.
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            }
            for statement in statements { try await connection.query(statement, logger: logger) }
            var found: Int32?
            for try await version in try await connection.query("SELECT max(version) FROM evstore_schema", logger: logger)
                .decode(Int32?.self)
            {
                found = version
            }
            if let found {
                guard found <= version else {
                    throw SyncError(
                        .internalError,
                        "the PostgreSQL database holds layout version \(found), newer than this server (\(version)): upgrade the server")
                }
            } else {
                try await connection.query("INSERT INTO evstore_schema (version) VALUES (\(version))", logger: logger)
                logger.notice("PostgreSQL tables created", metadata: ["version": "\(version)"])
            }
        }
    }
}
