import EventStore
import EventSync

/// The sync state of an LMDB server store, kept in its metadata beside the log:
///
/// | Key | Value |
/// |---|---|
/// | `sync.epoch` | the epoch (32 hex digits) |
/// | `sync.epoch-key` | the key that signs the epoch's marks (16 bytes, ``EpochKey``) |
/// | `sync.origin.<replica>` | the replica's high-water mark (8 bytes, big-endian) |
/// | `sync.owner.<replica>` | the credential id that owns the replica id |
/// | `sync.declared.<replica>` | the epoch, NUL, the highest origin sequence the owner declared (8 bytes) |
///
/// The digests come from ``LogDigestProjection`` when the store keeps it (`chained`), otherwise
/// they cover one event (a store an app serves itself without the projection).
struct StoreLedger: SyncLedgerReading {
    let reader: StoreReader
    let chained: Bool

    func epoch() throws -> String {
        guard let epoch = try StoreLedger.epoch(in: reader) else {
            throw SyncError(.internalError, "the store has no epoch")
        }
        return epoch
    }

    static func epoch(in reader: StoreReader) throws -> String? {
        try reader.metadata(forKey: SyncService.epochKey).map { String(decoding: $0, as: UTF8.self) }
    }

    func epochKey() throws -> EpochKey? { try StoreLedger.epochKey(in: reader) }

    static func epochKey(in reader: StoreReader) throws -> EpochKey? {
        guard let bytes = try reader.metadata(forKey: SyncService.epochSigningKey) else { return nil }
        guard let key = EpochKey(bytes: bytes) else {
            throw SyncError(.internalError, "the store's epoch key is damaged (\(bytes.count) bytes, not 16)")
        }
        return key
    }

    func head() throws -> UInt64 { try reader.head() }

    func digest(at seq: UInt64) throws -> LogDigest? {
        guard seq > 0 else { return .empty }
        if chained,
            let bytes = try reader.projectionValue(
                forKey: bigEndian(seq), projection: LogDigestProjection.projectionName,
                database: LogDigestProjection.database)
        {
            return LogDigest(rawValue: decodeBigEndian(bytes))
        }
        return try reader.event(at: seq).map { LogDigest.empty.appending($0) }
    }

    func highWater(of replica: ReplicaID) throws -> UInt64 {
        try reader.metadata(forKey: SyncService.originKeyPrefix + replica.description).map(decodeBigEndian) ?? 0
    }

    func owner(of replica: ReplicaID) throws -> String? {
        try reader.metadata(forKey: SyncService.ownerKeyPrefix + replica.description).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    func declaration(of replica: ReplicaID) throws -> ReplicaDeclaration? {
        // The epoch, a NUL, the sequence declared, then (since it is recorded) the stamp.
        guard let bytes = try reader.metadata(forKey: SyncService.declaredKeyPrefix + replica.description),
            let separator = bytes.firstIndex(of: 0), bytes.count == separator + 9 || bytes.count == separator + 17
        else { return nil }
        let through = separator + 1
        return ReplicaDeclaration(
            epoch: String(decoding: bytes[..<separator], as: UTF8.self),
            through: decodeBigEndian(Array(bytes[through..<through + 8])),
            stamped: bytes.count > through + 8 ? decodeBigEndian(Array(bytes[(through + 8)...])) : 0)
    }

    func holds(_ id: EventID) throws -> Bool { try reader.seq(of: id) != nil }
}

/// ``StoreLedger`` in a store's write transaction.
struct StoreWriterLedger: SyncLedger {
    let writer: StoreWriter
    let chained: Bool
    /// The replica ids of a store an app serves (its own writes), the current one first; empty
    /// for a store the service opened.
    let hostReplicas: [ReplicaID]
    private var reading: StoreLedger { StoreLedger(reader: writer, chained: chained) }

    init(writer: StoreWriter, chained: Bool, hostReplicas: [ReplicaID] = []) {
        self.writer = writer
        self.chained = chained
        self.hostReplicas = hostReplicas
    }

    func hostReplica(_ replica: ReplicaID) throws -> HostReplica {
        guard let index = hostReplicas.firstIndex(of: replica) else { return .none }
        return index == 0 ? .current : .retired
    }

    func epoch() throws -> String { try reading.epoch() }
    func epochKey() throws -> EpochKey? { try reading.epochKey() }
    func head() throws -> UInt64 { try reading.head() }
    func digest(at seq: UInt64) throws -> LogDigest? { try reading.digest(at: seq) }
    func highWater(of replica: ReplicaID) throws -> UInt64 { try reading.highWater(of: replica) }
    func owner(of replica: ReplicaID) throws -> String? { try reading.owner(of: replica) }
    func declaration(of replica: ReplicaID) throws -> ReplicaDeclaration? { try reading.declaration(of: replica) }
    func holds(_ id: EventID) throws -> Bool { try reading.holds(id) }

    mutating func setEpoch(_ epoch: String, key: EpochKey) throws {
        try StoreWriterLedger.setEpoch(epoch, key: key, in: writer)
    }

    /// Records `epoch` and its key in `writer`'s transaction.
    static func setEpoch(_ epoch: String, key: EpochKey, in writer: StoreWriter) throws {
        try writer.setMetadata(Array(epoch.utf8), forKey: SyncService.epochKey)
        try writer.setMetadata(key.bytes, forKey: SyncService.epochSigningKey)
    }

    mutating func setHighWater(_ sequence: UInt64, of replica: ReplicaID) throws {
        try writer.setMetadata(bigEndian(sequence), forKey: SyncService.originKeyPrefix + replica.description)
    }

    mutating func setOwner(_ credential: String, of replica: ReplicaID) throws {
        try writer.setMetadata(Array(credential.utf8), forKey: SyncService.ownerKeyPrefix + replica.description)
    }

    mutating func setDeclaration(_ declaration: ReplicaDeclaration, of replica: ReplicaID) throws {
        try writer.setMetadata(
            Array(declaration.epoch.utf8) + [0] + bigEndian(declaration.through) + bigEndian(declaration.stamped),
            forKey: SyncService.declaredKeyPrefix + replica.description)
    }

    /// The store checks the stamp against its own clock and skew bound.
    mutating func ingest(_ event: CheckedEvent, maxSkewMilliseconds: UInt64) throws -> StoreWriter.IngestOutcome {
        try writer.ingest(checked: event)
    }
}

extension SyncService {
    /// The meta key of a store's epoch.
    package static let epochKey = "sync.epoch"
    /// The meta key of the key that signs the epoch's marks (``EpochKey``).
    package static let epochSigningKey = "sync.epoch-key"
    /// The meta key prefix of the per-origin high-water marks.
    package static let originKeyPrefix = "sync.origin."
    /// The meta key prefix of replica owners (`sync.owner.<replica>` → credential id).
    package static let ownerKeyPrefix = "sync.owner."
    /// The meta key prefix of owners' declarations (`sync.declared.<replica>` → the epoch, NUL,
    /// then the highest origin sequence the owner said it holds, 8 bytes big-endian).
    package static let declaredKeyPrefix = "sync.declared."
}
