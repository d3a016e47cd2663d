import EventStore
import EventSync
import Logging
import PostgresNIO

/// The backend's tables, created on first use by whichever server process comes first (under a
/// transaction-scoped advisory lock per schema, so that processes starting together do not race):
///
/// - `evstore_stores`: one row per store — its epoch and the key that signs the epoch's marks
///   (``EventSyncService/EpochKey``), its head seq and the log digest at the head. Every push locks its store's row (`SELECT … FOR UPDATE`) until it commits.
/// - `evstore_events`: the logs — per store and seq, the event's origin replica (two 64-bit
///   halves), its origin sequence (unique per store and origin: pushes are idempotent across
///   instances), the log digest through it, and its canonical binary encoding.
/// - `evstore_replicas`: per store and replica id — its owner, its high-water mark, and what its
///   owner last declared it holds (with the epoch it was declared in, and the greatest stamp of
///   the events it declared it with).
/// - `evstore_partition`: the database's place in its deployment (``PostgresPartition``), recorded
///   on first use and checked by every process after.
/// - `evstore_schema`: the version of this layout (2 added `evstore_partition`, 3
///   `evstore_replicas.declared_stamp`, 4 `evstore_stores.epoch_key`).
enum PostgresSchema {
    /// The layout version this code writes.
    static let version: Int32 = 4
    /// The advisory lock key held while the tables of `schema` are created: one per schema, so
    /// that deployments in different schemas of one database never wait for each other.
    static func migrationLock(schema: String?) -> Int64 {
        var hash = FNV1a()
        for byte in "evstore.tables.\(schema ?? "")".utf8 { hash.combine(byte: byte) }
        return Int64(bitPattern: hash.state)
    }
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
            epoch_key bytea,
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
            declared_stamp bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (store, replica)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS evstore_partition (position integer NOT NULL, count integer NOT NULL)
        """,
    ]

    /// What a database of an older layout gets, by the version that added it (run once, when the
    /// database is upgraded: an `ALTER TABLE` locks the table even when it changes nothing).
    static let upgrades: [(version: Int32, statement: PostgresQuery)] = [
        // A declaration stored before has no stamp (0): it disowns nothing.
        (3, "ALTER TABLE evstore_replicas ADD COLUMN IF NOT EXISTS declared_stamp bigint NOT NULL DEFAULT 0"),
        // A store without a key gets one on its first request (PostgresSyncStorage.ensureKey).
        (4, "ALTER TABLE evstore_stores ADD COLUMN IF NOT EXISTS epoch_key bytea"),
    ]

    /// Creates the tables when missing, checks the layout version and the database's place in
    /// its deployment (recording it on first use).
    ///
    /// - Throws: ``EventSync/SyncError/Code/internalError`` for a database written by a newer
    ///   version, or one that records another place than `partition`.
    static func prepare(
        _ client: PostgresClient, schema: String?, partition: PostgresPartition, logger: Logger
    ) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock(schema: schema)))", logger: logger)
            if let schema {
                // The name is checked (PostgresBackend.isSchemaName): it needs no quoting.
                try await connection.query(
                    PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            }
            for statement in statements { try await connection.query(statement, logger: logger) }
            var found: Int32?
            for try await version in try await connection.query(
                "SELECT max(version) FROM evstore_schema", logger: logger
            )
            .decode(Int32?.self) {
                found = version
            }
            if let found, found > version {
                throw SyncError(
                    .internalError,
                    "the PostgreSQL database holds layout version \(found), newer than this server (\(version)): upgrade the server"
                )
            }
            if found != version {
                if let found {
                    for upgrade in upgrades where upgrade.version > found {
                        try await connection.query(upgrade.statement, logger: logger)
                    }
                }
                try await connection.query("INSERT INTO evstore_schema (version) VALUES (\(version))", logger: logger)
                logger.notice(
                    found == nil ? "PostgreSQL tables created" : "PostgreSQL tables upgraded",
                    metadata: ["version": "\(version)"])
            }
            try await place(partition, on: connection, logger: logger)
        }
    }

    /// Checks the database's recorded place against `partition`, or records it.
    private static func place(_ partition: PostgresPartition, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        let rows = try await connection.query(
            """
            SELECT position, count, EXISTS (SELECT 1 FROM evstore_stores) FROM evstore_partition
            RIGHT JOIN (SELECT 1) AS one ON true
            """, logger: logger)
        for try await (position, count, holdsStores) in rows.decode((Int32?, Int32?, Bool).self) {
            if let position, let count {
                let recorded = PostgresPartition(index: Int(position), count: Int(count))
                guard recorded == partition else {
                    throw SyncError(
                        .internalError,
                        "this PostgreSQL database is \(recorded) of its deployment, but the server was given it as "
                            + "\(partition): give every database of the deployment, in the order it was first used with"
                    )
                }
                return
            }
            guard partition.count == 1 || !holdsStores else {
                throw SyncError(
                    .internalError,
                    "this PostgreSQL database holds the stores of a deployment on one database; it cannot become "
                        + "\(partition) (its stores would be looked for in other databases)")
            }
        }
        try await connection.query(
            "INSERT INTO evstore_partition (position, count) VALUES (\(Int32(partition.index)), \(Int32(partition.count)))",
            logger: logger)
    }
}
