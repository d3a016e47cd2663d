import EventStore
import EventSync
import EventSyncService
import Logging
import NIOCore
import PostgresNIO

extension PostgresSyncStorage {
    /// A store's row, and the log digest at a client's mark when asked.
    struct StoreState: Sendable {
        var epoch: String
        /// The key that signs the epoch's marks (`nil` for a row from before signed marks).
        var key: EpochKey?
        var head: UInt64
        var headDigest: LogDigest
        /// The digest at the mark asked for; `nil` when the log is shorter.
        var markDigest: LogDigest?

        /// A store's state from its row, with the digest at `mark` when asked: the empty digest
        /// for an empty log and at seq 0, none past the head.
        init(
            epoch: String, key: EpochKey?, head: UInt64, headDigest: LogDigest, mark: UInt64?, digestAtMark: LogDigest?
        ) {
            self.epoch = epoch
            self.key = key
            self.head = head
            self.headDigest = head == 0 ? .empty : headDigest
            if let mark { markDigest = mark == 0 ? .empty : mark > head ? nil : digestAtMark }
        }

        /// Whether `check` proves the log was rewound (see
        /// ``EventSyncService/SyncLedgerReading/continuityBroken(_:)``).
        ///
        /// - Throws: ``EventSync/SyncError/Code/unverifiedMark`` for a claim of a rewind with a mark
        ///   the server did not sign.
        func continuityBroken(_ check: ContinuityCheck?) throws -> Bool {
            try check?.provesRewound(epoch: epoch, key: key, digestAtMark: markDigest) ?? false
        }

        /// The signature of the mark at the head.
        var headSignature: MarkSignature? {
            key?.signature(epoch: epoch, seq: head, digest: headDigest)
        }
    }

    /// Reads a store's row, with the digest at `mark`.
    ///
    /// - Throws: ``EventSync/SyncError/Code/notFound`` for a missing store.
    static func storeState(
        _ name: String, mark: UInt64? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> StoreState {
        let markSeq = Int64(bitPattern: mark ?? 0)
        let rows = try await connection.query(
            """
            SELECT epoch, epoch_key, head, head_digest,
                (SELECT digest FROM evstore_events WHERE store = s.name AND seq = \(markSeq))
            FROM evstore_stores s WHERE name = \(name)
            """, logger: logger)
        for try await (epoch, key, head, headDigest, markDigest) in rows.decode(
            (String, ByteBuffer?, Int64, Int64, Int64?).self)
        {
            return StoreState(
                epoch: epoch, key: try epochKey(key), head: UInt64(bitPattern: head),
                headDigest: LogDigest(rawValue: UInt64(bitPattern: headDigest)),
                mark: mark, digestAtMark: markDigest.map { LogDigest(rawValue: UInt64(bitPattern: $0)) })
        }
        throw SyncError(.notFound, "no store named \(name.debugDescription)")
    }

    /// ``storeState(_:mark:on:logger:)`` on a pooled connection.
    func storeState(_ name: String, mark: UInt64? = nil, logger: Logger) async throws -> StoreState {
        try await client.withConnection { connection in
            try await PostgresSyncStorage.storeState(name, mark: mark, on: connection, logger: logger)
        }
    }

    /// The store's state; when `check` proves the log was rewound, starts a new epoch first (in
    /// a transaction that locks the row and checks again).
    func verifyContinuity(_ name: String, check: ContinuityCheck?, logger: Logger) async throws -> StoreState {
        var state = try await storeState(name, mark: check?.seq, logger: logger)
        if state.key == nil {
            state.key = try await client.withConnection { connection in
                try await PostgresSyncStorage.ensureKey(name, on: connection, logger: logger)
            }
        }
        guard try state.continuityBroken(check), let check else { return state }
        let rotated = try await client.withTransaction(logger: logger) { connection -> StoreState in
            let locked = try await PostgresSyncStorage.lock(name, marks: [check.seq], on: connection, logger: logger)
            var state = StoreState(
                epoch: locked.epoch, key: locked.key, head: locked.head, headDigest: locked.headDigest, mark: check.seq,
                digestAtMark: locked.markDigests[check.seq])
            guard try state.continuityBroken(check) else { return state }
            state.epoch = ReplicaID.random().description
            let key = EpochKey.random()
            state.key = key
            try await connection.query(
                """
                UPDATE evstore_stores SET epoch = \(state.epoch), epoch_key = \(ByteBuffer(bytes: key.bytes))
                WHERE name = \(name)
                """, logger: logger)
            SyncService.logRotation(logger, name: name, check: check, epoch: state.epoch)
            return state
        }
        return rotated
    }

    // MARK: Push

    /// Applies a batch of pushes in the caller's transaction, each on its own copy of the
    /// store's state (one that fails leaves nothing); returns a result per push and whether any
    /// appended.
    ///
    /// Five statements, whatever the batch: lock the store's row (creating it first when asked
    /// and missing) with the digests at the clients' marks, read the replica records and the
    /// held events the pushes name, then write everything in one.
    static func push(
        _ name: String, _ pushes: [CheckedPush], create: Bool, channel: String, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> ([Result<PushOutcome, SyncError>], Bool) {
        let marks = Array(Set(pushes.compactMap { $0.check?.seq }.filter { $0 > 0 }))
        var locked: LockedStore
        var created = false
        do {
            locked = try await lock(name, marks: marks, on: connection, logger: logger)
        } catch let error as SyncError where error.code == .notFound && create {
            let epoch = ReplicaID.random().description
            let key = ByteBuffer(bytes: EpochKey.random().bytes)
            let empty = Int64(bitPattern: LogDigest.empty.rawValue)
            // Not when a store's name differs only by case (StoreName): the LMDB backend cannot
            // hold both on a file system that ignores case, and the backends refuse alike.
            // Creations of names that differ only by case take turns (a lock the transaction
            // holds to its end), so that the insert of one sees the other's row.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(\(PostgresSyncStorage.creationLockClass), hashtext(lower(\(name))))",
                logger: logger)
            let rows = try await connection.query(
                """
                INSERT INTO evstore_stores (name, epoch, epoch_key, head_digest)
                SELECT \(name), \(epoch), \(key), \(empty)
                WHERE NOT EXISTS (SELECT 1 FROM evstore_stores WHERE lower(name) = lower(\(name)) AND name <> \(name))
                ON CONFLICT (name) DO NOTHING RETURNING name
                """,
                logger: logger)
            for try await _ in rows.decode(String.self) { created = true }
            do {
                locked = try await lock(name, marks: marks, on: connection, logger: logger)
            } catch let missing as SyncError where missing.code == .notFound {
                var twin: String?
                for try await found in try await connection.query(
                    "SELECT name FROM evstore_stores WHERE lower(name) = lower(\(name)) LIMIT 1", logger: logger
                ).decode(String.self) {
                    twin = found
                }
                guard let twin else { throw missing }
                throw SyncError(
                    .invalidStoreName,
                    "cannot create store \(name.debugDescription): store \(twin.debugDescription) exists, and store "
                        + "names must differ by more than case")
            }
        }
        if locked.key == nil { locked.key = try await ensureKey(name, on: connection, logger: logger) }
        let ids = pushes.flatMap { $0.events.map(\.event.id) }
        let named = Set(pushes.map(\.request.replica) + ids.map(\.origin))
        var ledger = PostgresLedger(
            epoch: locked.epoch, key: locked.key, head: locked.head, headDigest: locked.headDigest,
            markDigests: locked.markDigests, replicas: try await replicas(name, named, on: connection, logger: logger),
            held: try await held(name, ids, on: connection, logger: logger))
        var results: [Result<PushOutcome, SyncError>] = []
        results.reserveCapacity(pushes.count)
        for push in pushes {
            var trial = ledger
            trial.now = push.serverTime
            do {
                let outcome = try trial.apply(push)
                ledger = trial
                if let rotated = outcome.rotatedEpoch, let check = push.check {
                    SyncService.logRotation(logger, name: name, check: check, epoch: rotated)
                }
                results.append(.success(outcome))
            } catch {
                results.append(.failure(syncError(error)))
            }
        }
        if created && ledger.appended.isEmpty {
            // Every push of the batch that created the store was refused: the store is not
            // created (a refused push changes nothing; its name stays free).
            try await connection.query("DELETE FROM evstore_stores WHERE name = \(name)", logger: logger)
            return (results, false)
        }
        try await write(ledger, of: name, channel: channel, on: connection, logger: logger)
        if created { logger.notice("store created", metadata: ["store": "\(name)", "epoch": "\(locked.epoch)"]) }
        return (results, !ledger.appended.isEmpty)
    }

    /// The first key of the advisory locks that creations of a store take, with the hash of the
    /// store's name in lower case as the second ("evsc").
    static let creationLockClass: Int32 = 0x6576_7363

    /// A store's row, locked, with the digests at some seqs.
    struct LockedStore: Sendable {
        var epoch: String
        var key: EpochKey?
        var head: UInt64
        var headDigest: LogDigest
        /// The digests at the marks asked for that the log holds.
        var markDigests: [UInt64: LogDigest]
    }

    /// Locks a store's row until the transaction ends; reads it with the digests at `marks`.
    ///
    /// - Throws: ``EventSync/SyncError/Code/notFound`` for a missing store.
    static func lock(
        _ name: String, marks: [UInt64], on connection: PostgresConnection, logger: Logger
    ) async throws -> LockedStore {
        let seqs = marks.map { Int64(bitPattern: $0) }
        let rows = try await connection.query(
            """
            SELECT epoch, epoch_key, head, head_digest,
                ARRAY(SELECT seq FROM evstore_events WHERE store = s.name AND seq = ANY(\(seqs)::bigint[]) ORDER BY seq),
                ARRAY(SELECT digest FROM evstore_events WHERE store = s.name AND seq = ANY(\(seqs)::bigint[]) ORDER BY seq)
            FROM evstore_stores s WHERE name = \(name) FOR UPDATE
            """, logger: logger)
        for try await (epoch, key, head, headDigest, markSeqs, markDigests) in rows.decode(
            (String, ByteBuffer?, Int64, Int64, [Int64], [Int64]).self)
        {
            var digests: [UInt64: LogDigest] = [:]
            for (seq, digest) in zip(markSeqs, markDigests) {
                digests[UInt64(bitPattern: seq)] = LogDigest(rawValue: UInt64(bitPattern: digest))
            }
            return LockedStore(
                epoch: epoch, key: try epochKey(key), head: UInt64(bitPattern: head),
                headDigest: LogDigest(rawValue: UInt64(bitPattern: headDigest)), markDigests: digests)
        }
        throw SyncError(.notFound, "no store named \(name.debugDescription)")
    }

    /// The records of `replicas` on the store.
    private static func replicas(
        _ name: String, _ replicas: Set<ReplicaID>, on connection: PostgresConnection, logger: Logger
    ) async throws -> [ReplicaID: PostgresLedger.Replica] {
        let byName = Dictionary(uniqueKeysWithValues: replicas.map { ($0.description, $0) })
        let rows = try await connection.query(
            """
            SELECT replica, owner, high_water, declared_epoch, declared, declared_stamp FROM evstore_replicas
            WHERE store = \(name) AND replica = ANY(\(Array(byName.keys)))
            """, logger: logger)
        var found: [ReplicaID: PostgresLedger.Replica] = [:]
        for try await (replica, owner, highWater, declaredEpoch, declared, stamped) in rows.decode(
            (String, String, Int64, String, Int64, Int64).self)
        {
            guard let id = byName[replica] else { continue }
            found[id] = PostgresLedger.Replica(
                owner: owner, highWater: UInt64(bitPattern: highWater),
                declaration: declaredEpoch.isEmpty
                    ? nil
                    : ReplicaDeclaration(
                        epoch: declaredEpoch, through: UInt64(bitPattern: declared),
                        stamped: UInt64(bitPattern: stamped)))
        }
        return found
    }

    /// The events of `ids` that the store's log holds.
    private static func held(
        _ name: String, _ ids: [EventID], on connection: PostgresConnection, logger: Logger
    ) async throws -> [EventID: PostgresLedger.Held] {
        guard !ids.isEmpty else { return [:] }
        let highs = ids.map { Int64(bitPattern: $0.origin.high) }
        let lows = ids.map { Int64(bitPattern: $0.origin.low) }
        let sequences = ids.map { Int64(bitPattern: $0.sequence) }
        let rows = try await connection.query(
            """
            SELECT e.origin_high, e.origin_low, e.origin_seq, e.seq, e.body
            FROM unnest(\(highs)::bigint[], \(lows)::bigint[], \(sequences)::bigint[]) AS k(high, low, sequence)
            JOIN evstore_events e ON e.store = \(name) AND e.origin_high = k.high AND e.origin_low = k.low
                AND e.origin_seq = k.sequence
            """, logger: logger)
        var held: [EventID: PostgresLedger.Held] = [:]
        for try await (high, low, sequence, seq, body) in rows.decode((Int64, Int64, Int64, Int64, ByteBuffer).self) {
            let id = EventID(
                origin: ReplicaID(high: UInt64(bitPattern: high), low: UInt64(bitPattern: low)),
                sequence: UInt64(bitPattern: sequence))
            held[id] = PostgresLedger.Held(seq: UInt64(bitPattern: seq), encoded: Array(buffer: body))
        }
        return held
    }

    /// Writes what the push changed — its events, its replica records, the store's row — and
    /// the notification that wakes live pulls on every instance (sent by PostgreSQL at commit),
    /// in one statement.
    private static func write(
        _ ledger: PostgresLedger, of name: String, channel: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let appended = ledger.appended
        let changed = ledger.changedReplicas.sorted { $0.description < $1.description }
        guard !appended.isEmpty || !changed.isEmpty || ledger.epochChanged else { return }
        let records = changed.map { ledger.replicas[$0] ?? PostgresLedger.Replica() }
        let seqs = appended.map { Int64(bitPattern: $0.seq) }
        let highs = appended.map { Int64(bitPattern: $0.checked.event.id.origin.high) }
        let lows = appended.map { Int64(bitPattern: $0.checked.event.id.origin.low) }
        let sequences = appended.map { Int64(bitPattern: $0.checked.event.id.sequence) }
        let digests = appended.map { Int64(bitPattern: $0.digest.rawValue) }
        let bodies = appended.map { ByteBuffer(bytes: $0.checked.encoded) }
        let replicas = changed.map(\.description)
        let owners = records.map(\.owner)
        let highWaters = records.map { Int64(bitPattern: $0.highWater) }
        let declaredEpochs = records.map { $0.declaration?.epoch ?? "" }
        let declared = records.map { Int64(bitPattern: $0.declaration?.through ?? 0) }
        let stamped = records.map { Int64(bitPattern: $0.declaration?.stamped ?? 0) }
        let head = Int64(bitPattern: try ledger.head())
        let digest = Int64(bitPattern: try ledger.headDigest().rawValue)
        let epoch = try ledger.epoch()
        let key = try ledger.epochKey().map { ByteBuffer(bytes: $0.bytes) }
        let notify = !appended.isEmpty
        try await connection.query(
            """
            WITH appended AS (
                INSERT INTO evstore_events (store, seq, origin_high, origin_low, origin_seq, digest, body)
                SELECT \(name), * FROM unnest(\(seqs)::bigint[], \(highs)::bigint[], \(lows)::bigint[],
                    \(sequences)::bigint[], \(digests)::bigint[], \(bodies)::bytea[])
            ), replicas AS (
                INSERT INTO evstore_replicas (store, replica, owner, high_water, declared_epoch, declared, declared_stamp)
                SELECT \(name), * FROM unnest(\(replicas)::text[], \(owners)::text[], \(highWaters)::bigint[],
                    \(declaredEpochs)::text[], \(declared)::bigint[], \(stamped)::bigint[])
                ON CONFLICT (store, replica) DO UPDATE SET owner = EXCLUDED.owner, high_water = EXCLUDED.high_water,
                    declared_epoch = EXCLUDED.declared_epoch, declared = EXCLUDED.declared,
                    declared_stamp = EXCLUDED.declared_stamp
            ), store AS (
                UPDATE evstore_stores SET epoch = \(epoch), epoch_key = \(key), head = \(head), head_digest = \(digest)
                WHERE name = \(name) RETURNING name
            )
            SELECT pg_notify(\(channel), name) FROM store WHERE \(notify)
            """, logger: logger)
    }

    // MARK: Errors

    /// Maps the database's errors: a connection that fails or a serialisation failure is
    /// ``EventSync/SyncError/Code/unavailable`` (the client retries), a full disk
    /// ``EventSync/SyncError/Code/insufficientStorage``.
    static func syncError(_ error: any Error) -> SyncError {
        if let error = error as? SyncError { return error }
        if let error = error as? PostgresTransactionError {
            if let cause = error.closureError { return syncError(cause) }
            if let cause = error.beginError ?? error.commitError { return syncError(cause) }
            return SyncError(.internalError, "database transaction failed: \(error)", cause: error)
        }
        guard let error = error as? PSQLError else { return SyncService.syncError(error) }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "\(error)"
            if state == "53100" {
                return SyncError(.insufficientStorage, "the database's disk is full: \(message)", cause: error)
            }
            if state.hasPrefix("08") || state.hasPrefix("57P") || state == "40001" || state == "40P01"
                || state == "53300"
            {
                return SyncError(.unavailable, "the database is unavailable (\(state)): \(message)", cause: error)
            }
            return SyncError(.internalError, "database error \(state): \(message)", cause: error)
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .queryCancelled:
            return SyncError(.unavailable, "the database is unavailable: \(error.code)", cause: error)
        default:
            return SyncError(.internalError, "database error: \(error.code)", cause: error)
        }
    }
}
