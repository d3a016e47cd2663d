import EventStore
import EventSync
import EventSyncService
import Logging
import NIOCore
import PostgresNIO

extension PostgresSyncStorage {
    /// The key of a store's epoch, made now when its row has none: a row from before layout 4,
    /// or one a process of an earlier version created since. Processes that make one at the same
    /// moment agree on the first written. `nil` for a missing store.
    static func ensureKey(_ name: String, on connection: PostgresConnection, logger: Logger) async throws
        -> EpochKey?
    {
        let made = ByteBuffer(bytes: EpochKey.random().bytes)
        let rows = try await connection.query(
            """
            UPDATE evstore_stores SET epoch_key = COALESCE(epoch_key, \(made)) WHERE name = \(name)
            RETURNING epoch_key
            """, logger: logger)
        for try await key in rows.decode(ByteBuffer?.self) { return try epochKey(key) }
        return nil
    }

    /// The key of a store's row (`nil` for a row from before signed marks).
    ///
    /// - Throws: ``EventSync/SyncError/Code/internalError`` for a key that is not 16 bytes.
    static func epochKey(_ bytes: ByteBuffer?) throws -> EpochKey? {
        guard let bytes else { return nil }
        guard let key = EpochKey(bytes: bytes.readableBytesView) else {
            throw SyncError(.internalError, "a store's epoch key is damaged (\(bytes.readableBytes) bytes, not 16)")
        }
        return key
    }
}
