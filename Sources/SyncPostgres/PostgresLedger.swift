import EventStore
import EventSync
import EventSyncService

/// A batch of pushes' view of one store in a PostgreSQL transaction: what the pushes can read,
/// loaded in a few queries once the store's row is locked, and what they write, collected for
/// one statement before the commit (see ``PostgresSyncStorage`` and ``PushBatcher``).
///
/// Reading everything first is correct because the row lock serialises every push to the
/// store: nothing the pushes read can change until they commit. A ledger is a value, so a push
/// is applied on a copy that replaces it only when the whole push succeeded.
struct PostgresLedger: SyncLedger {
    /// One replica's record.
    struct Replica: Sendable, Hashable {
        var owner = ""
        var highWater: UInt64 = 0
        var declaration: ReplicaDeclaration?
    }

    /// An event the log holds (or that this push appends).
    struct Held: Sendable {
        var seq: UInt64
        var encoded: [UInt8]
    }

    /// An event this push appends.
    struct Appended: Sendable {
        var seq: UInt64
        var digest: LogDigest
        var checked: CheckedEvent
    }

    private(set) var currentEpoch: String
    private(set) var currentKey: EpochKey?
    private(set) var currentHead: UInt64
    /// The digests the push may read: at the head, at the client's mark, at each appended seq.
    private var digests: [UInt64: LogDigest]
    private(set) var replicas: [ReplicaID: Replica]
    /// The events of the push that the log holds, by id.
    private var held: [EventID: Held]
    private(set) var appended: [Appended] = []
    private(set) var changedReplicas: Set<ReplicaID> = []
    private(set) var epochChanged = false
    /// The server's clock, in milliseconds since 1970, when the push being applied began.
    var now: UInt64 = 0

    /// A ledger on a store whose row the transaction locked.
    ///
    /// - Parameters:
    ///   - markDigests: The digests at the clients' marks (those at or below the head).
    ///   - replicas: The records of every replica the pushes name.
    ///   - held: The events of the pushes that the log holds.
    init(
        epoch: String, key: EpochKey?, head: UInt64, headDigest: LogDigest, markDigests: [UInt64: LogDigest],
        replicas: [ReplicaID: Replica], held: [EventID: Held]
    ) {
        self.currentEpoch = epoch
        self.currentKey = key
        self.currentHead = head
        var digests = markDigests
        digests[0] = .empty
        digests[head] = head == 0 ? .empty : headDigest
        self.digests = digests
        self.replicas = replicas
        self.held = held
    }

    func epoch() throws -> String { currentEpoch }
    func epochKey() throws -> EpochKey? { currentKey }
    func head() throws -> UInt64 { currentHead }

    func digest(at seq: UInt64) throws -> LogDigest? {
        guard seq <= currentHead else { return nil }
        guard let digest = digests[seq] else {
            throw SyncError(.internalError, "the push read the log digest at seq \(seq), which it did not load")
        }
        return digest
    }

    func highWater(of replica: ReplicaID) throws -> UInt64 { replicas[replica]?.highWater ?? 0 }

    func owner(of replica: ReplicaID) throws -> String? {
        guard let owner = replicas[replica]?.owner, !owner.isEmpty else { return nil }
        return owner
    }

    func declaration(of replica: ReplicaID) throws -> ReplicaDeclaration? { replicas[replica]?.declaration }

    func holds(_ id: EventID) throws -> Bool { held[id] != nil }

    mutating func setEpoch(_ epoch: String, key: EpochKey) throws {
        currentEpoch = epoch
        currentKey = key
        epochChanged = true
    }

    mutating func setHighWater(_ sequence: UInt64, of replica: ReplicaID) throws {
        replicas[replica, default: Replica()].highWater = sequence
        changedReplicas.insert(replica)
    }

    mutating func setOwner(_ credential: String, of replica: ReplicaID) throws {
        replicas[replica, default: Replica()].owner = credential
        changedReplicas.insert(replica)
    }

    mutating func setDeclaration(_ declaration: ReplicaDeclaration, of replica: ReplicaID) throws {
        replicas[replica, default: Replica()].declaration = declaration
        changedReplicas.insert(replica)
    }

    mutating func ingest(_ event: CheckedEvent, maxSkewMilliseconds: UInt64) throws -> StoreWriter.IngestOutcome {
        // An event the log holds is a duplicate whatever its stamp says now (a retry after this
        // instance's clock stepped back, or one answered by an instance whose clock runs ahead).
        if let existing = held[event.event.id] {
            try event.checkSameContent(as: existing.encoded)
            return .duplicate(seq: existing.seq)
        }
        try event.checkClock(maxSkewMilliseconds: maxSkewMilliseconds, now: now)
        let seq = currentHead + 1
        let digest = (digests[currentHead] ?? .empty).appending(event.event)
        currentHead = seq
        digests[seq] = digest
        held[event.event.id] = Held(seq: seq, encoded: event.encoded)
        appended.append(Appended(seq: seq, digest: digest, checked: event))
        return .appended(seq: seq)
    }
}
