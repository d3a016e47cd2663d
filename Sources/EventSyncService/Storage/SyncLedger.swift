package import EventStore
package import EventSync

/// A store's sync state as one transaction sees it: the log's head and digests, the epoch, and
/// per replica id its owner, its high-water mark and what its owner declared it holds.
///
/// The push logic (``SyncLedger/apply(_:)``: continuity, ownership, ingestion, high-water marks)
/// is written once against this protocol; each backend gives it a view of one transaction.
package protocol SyncLedgerReading {
    /// The store's current epoch.
    func epoch() throws -> String
    /// The key that signs the marks of the current epoch (`nil` for a store whose epoch predates
    /// signed marks and got no key yet: its marks go out unsigned).
    func epochKey() throws -> EpochKey?
    /// The seq of the last event in the log (0 for none).
    func head() throws -> UInt64
    /// The digest of the log through `seq`, or `nil` when the log is shorter.
    func digest(at seq: UInt64) throws -> LogDigest?
    /// The highest origin sequence of `replica`'s events the store holds (0 for none).
    func highWater(of replica: ReplicaID) throws -> UInt64
    /// The credential id that owns `replica`, if any.
    func owner(of replica: ReplicaID) throws -> String?
    /// What the owner of `replica` last declared it holds, and in which epoch.
    func declaration(of replica: ReplicaID) throws -> ReplicaDeclaration?
    /// Whether the log holds an event under `id`.
    func holds(_ id: EventID) throws -> Bool
    /// Whether `replica` is one the store itself writes under (a store an app serves with
    /// ``SyncService/serve(_:as:)``), current or retired: no credential may push new events under
    /// it.
    func hostReplica(_ replica: ReplicaID) throws -> HostReplica
}

/// Whether a replica id is one of the store's own (a store an app serves).
package enum HostReplica: Sendable {
    /// Not the store's.
    case none
    /// The id the store writes under now: it holds every event of it.
    case current
    /// An id the store left (a restamp moved some of its events to a new id).
    case retired
}

extension SyncLedgerReading {
    /// A store the service opened itself writes nothing of its own.
    package func hostReplica(_ replica: ReplicaID) throws -> HostReplica { .none }
}

/// ``SyncLedgerReading`` in a write transaction.
package protocol SyncLedger: SyncLedgerReading {
    /// Starts `epoch`, whose marks `key` signs.
    mutating func setEpoch(_ epoch: String, key: EpochKey) throws
    /// Records the high-water mark of `replica`.
    mutating func setHighWater(_ sequence: UInt64, of replica: ReplicaID) throws
    /// Makes `credential` the owner of `replica`.
    mutating func setOwner(_ credential: String, of replica: ReplicaID) throws
    /// Records what the owner of `replica` declared it holds.
    mutating func setDeclaration(_ declaration: ReplicaDeclaration, of replica: ReplicaID) throws
    /// Appends `event` under the next seq, or finds it in the log already (the same content;
    /// another content under its id throws ``EventStore/EventStoreError/Code/eventConflict``).
    /// Checks its stamp against the server's clock first (at most `maxSkewMilliseconds` ahead).
    mutating func ingest(_ event: CheckedEvent, maxSkewMilliseconds: UInt64) throws -> StoreWriter.IngestOutcome
}

/// What the owner of a replica id declared it holds (``EventSync/PushRequest/through``), in the
/// epoch it declared it in.
package struct ReplicaDeclaration: Sendable, Hashable {
    /// The epoch the declaration was made in; it counts only in that epoch.
    package var epoch: String
    /// The highest origin sequence the owner said it holds.
    package var through: UInt64
    /// The greatest of the stamps of the owner's events in its declaring pushes and of the clocks
    /// they declared (``EventSync/PushRequest/clock``, taken no further than the server's clock
    /// plus its skew bound): every event the owner stamps later is above it (0: not recorded, for
    /// declarations stored before it was).
    ///
    /// An event of the replica past ``through`` stamped at or before it was written before a
    /// push that declared the owner does not hold it: the owner lost it. One stamped after it
    /// may be a write the owner made since and has not pushed yet.
    package var stamped: UInt64

    package init(epoch: String, through: UInt64, stamped: UInt64 = 0) {
        self.epoch = epoch
        self.through = through
        self.stamped = stamped
    }

    /// Whether the owner's declaration shows it no longer holds `event`, one of its replica's
    /// events: past what it declared, and stamped before a declaring push.
    package func disowns(_ event: Event) -> Bool {
        event.id.sequence > through && event.hlc.rawValue <= stamped
    }
}

extension SyncLedgerReading {
    /// Whether `check` proves the log was rewound: same epoch, a mark the server signed, but the
    /// log no longer holds what the client saw there (it is shorter, or its digest there differs).
    ///
    /// - Throws: ``EventSync/SyncError/Code/unverifiedMark`` when the check claims a rewind with a
    ///   mark the server did not sign (see ``ContinuityCheck/provesRewound(epoch:key:digestAtMark:)``).
    package func continuityBroken(_ check: ContinuityCheck?) throws -> Bool {
        guard let check, check.seq > 0, try epoch() == check.epoch else { return false }
        return try check.provesRewound(epoch: check.epoch, key: try epochKey(), digestAtMark: try digest(at: check.seq))
    }

    /// The digest at the head.
    package func headDigest() throws -> LogDigest {
        try digest(at: head()) ?? .empty
    }

    /// The mark at the head, as an answer reports it: the epoch, the head, the digest there and
    /// its signature (`nil` when the epoch has no key), each read once.
    package func headMark() throws -> (epoch: String, head: UInt64, digest: LogDigest, signature: MarkSignature?) {
        let epoch = try epoch()
        let head = try head()
        let digest = try digest(at: head) ?? .empty
        return (epoch, head, digest, try epochKey()?.signature(epoch: epoch, seq: head, digest: digest))
    }
}

extension ContinuityCheck {
    /// Whether this check proves a store's log was rewound, given the store's `epoch`, the key
    /// that signs its marks and the digest of its log at the check's mark (`nil` when the log is
    /// shorter): the same epoch, a mark past the start, and a log that no longer holds what the
    /// client saw there, at a mark that `key` signed.
    ///
    /// - Throws: ``EventSync/SyncError/Code/unverifiedMark`` when the log does not hold the mark
    ///   but `key` did not sign it (a mark the client made up, one from before the epoch had a
    ///   key, or one signed with a key a restore lost): the server cannot tell a rewind from a
    ///   forgery, starts no new epoch, and the request changes nothing.
    package func provesRewound(epoch: String, key: EpochKey?, digestAtMark: LogDigest?) throws -> Bool {
        guard seq > 0 && epoch == self.epoch && digestAtMark != digest else { return false }
        guard (trustedUnsigned && signature == nil) || key?.signed(self) == true else {
            throw SyncError(
                .unverifiedMark,
                "the log does not hold the continuity mark \(seq) with digest \(digest), and the server did not sign "
                    + "that mark: no new epoch is started; forget the positions and sync everything again")
        }
        return true
    }
}
