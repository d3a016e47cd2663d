public import EventStore

/// What a client knows of a server log, sent with every request so that the server can tell
/// whether its log still continues the one the client saw: the epoch, a server seq, and the
/// ``LogDigest`` the server reported at that seq.
public struct ContinuityCheck: Sendable, Hashable {
    /// The server epoch the client synced with.
    public var epoch: String
    /// The highest server seq the client knows about (its *mark*).
    public var seq: UInt64
    /// The server's digest at ``seq``.
    public var digest: LogDigest
    /// The server's signature of ``epoch``, ``seq`` and ``digest`` (`nil` for a mark from a
    /// server that did not sign it): only a signed mark can prove that the server's log was
    /// rewound.
    public var signature: MarkSignature?
    /// Whether the server takes this check's word for a rewind without a signature (set by a
    /// server configured to, for clients of an earlier release; see
    /// `SyncService.Configuration.trustsUnsignedMarks`).
    package var trustedUnsigned = false

    /// Creates a check.
    public init(epoch: String, seq: UInt64, digest: LogDigest, signature: MarkSignature? = nil) {
        self.epoch = epoch
        self.seq = seq
        self.digest = digest
        self.signature = signature
    }
}

/// A server store's state: `GET /v1/stores/{store}`.
public struct RemoteInfo: Sendable, Hashable {
    /// The store's name on the server.
    public var store: String
    /// The seq of the last event in the server's log.
    public var head: UInt64
    /// The server's epoch for the store (changes when the store is restored from an older copy).
    public var epoch: String
    /// The log digest at ``head``.
    public var digest: LogDigest
    /// The server's limits.
    public var limits: SyncLimits
    /// When the request named a replica: the highest origin sequence of that replica's events
    /// the server holds (0 for none). A store whose own origin sequence is lower has lost
    /// events it published — it was restored from an older copy, or another copy of it wrote
    /// under the same id — and moves to a new replica id before it writes more.
    public var replicaHighWater: UInt64?
    /// The server's signature of ``epoch``, ``head`` and ``digest`` (`nil` from a server that does
    /// not sign marks).
    public var signature: MarkSignature?

    /// Creates an info.
    public init(
        store: String, head: UInt64, epoch: String, digest: LogDigest, limits: SyncLimits,
        replicaHighWater: UInt64? = nil, signature: MarkSignature? = nil
    ) {
        self.store = store
        self.head = head
        self.epoch = epoch
        self.digest = digest
        self.limits = limits
        self.replicaHighWater = replicaHighWater
        self.signature = signature
    }
}

/// A batch of events to append to a server store: `POST /v1/stores/{store}/events`.
///
/// Every event of a push carries the id of ``replica``. A replica pushes its own events; with
/// ``relay`` it forwards the events of another replica that it received elsewhere (peer to
/// peer, or to a server restored from an older copy). See <doc:Sync> for who may push what.
public struct PushRequest: Sendable, Hashable {
    /// The replica whose events these are: the server answers with the highest origin seq it
    /// holds for it.
    public var replica: ReplicaID
    /// The events, in the pusher's log order. Their `seq` is ignored. A replica's own push may
    /// carry none: it then only declares ``through`` and ``clock`` (for an id the pusher's
    /// credential owns; it claims no id).
    public var events: [Event]
    /// Whether the pusher forwards another replica's events (`false`: its own). A relay never
    /// makes the pusher the replica id's owner, and is refused for a replica id that another
    /// credential owns.
    public var relay: Bool
    /// For a replica's own push: the highest origin sequence of ``replica`` the pusher holds.
    /// The server remembers it for the current epoch, with the greatest stamp of the push's
    /// events and ``clock``; a relay of an event of ``replica`` above it, stamped no later than
    /// that, is then an event its owner no longer has (``SyncError/Code/orphanedEvent``).
    public var through: UInt64?
    /// With ``through``: a stamp below every stamp the pusher gives its events after this push
    /// (its clock, raised to the present and saved, read with ``through`` in one writer turn),
    /// so that the server can tell an event the owner wrote before this push (and no longer
    /// holds) from one it writes after (and will push). The server takes it no further than its
    /// own clock plus the skew bound.
    public var clock: HLCTimestamp?

    /// Creates a push.
    public init(
        replica: ReplicaID, events: [Event], relay: Bool = false, through: UInt64? = nil, clock: HLCTimestamp? = nil
    ) {
        self.replica = replica
        self.events = events
        self.relay = relay
        self.through = through
        self.clock = clock
    }
}

/// The server's answer to a push.
public struct PushResponse: Sendable, Hashable {
    /// Events appended to the server's log.
    public var accepted: Int
    /// Events the server already held (acknowledged, not appended again).
    public var duplicates: Int
    /// The server's head after the push.
    public var head: UInt64
    /// The log digest at ``head``.
    public var digest: LogDigest
    /// The server's epoch.
    public var epoch: String
    /// The pushing replica.
    public var replica: ReplicaID
    /// The highest origin seq of ``replica``'s own events the server holds (0 for none).
    public var highWater: UInt64
    /// The server's signature of ``epoch``, ``head`` and ``digest`` (`nil` from a server that does
    /// not sign marks).
    public var signature: MarkSignature?

    /// Creates a response.
    public init(
        accepted: Int, duplicates: Int, head: UInt64, digest: LogDigest, epoch: String, replica: ReplicaID,
        highWater: UInt64, signature: MarkSignature? = nil
    ) {
        self.signature = signature
        self.accepted = accepted
        self.duplicates = duplicates
        self.head = head
        self.digest = digest
        self.epoch = epoch
        self.replica = replica
        self.highWater = highWater
    }
}

/// A page of a server log: `GET /v1/stores/{store}/events?after=SEQ&limit=N`.
public struct PullPage: Sendable, Hashable {
    /// The events after `after`, in server order; each `seq` is its server seq.
    public var events: [Event] {
        // The received bytes no longer show the events.
        didSet { receivedChecksum = nil }
    }
    /// The cursor for the next page: the seq of the last event (or `after` when empty).
    public var next: UInt64
    /// The server's head when the page was read.
    public var head: UInt64
    /// The server's epoch.
    public var epoch: String
    /// The log digest at ``next``.
    public var digest: LogDigest
    /// The checksum of ``events`` (see ``PageChecksum``).
    public var checksum: PageChecksum
    /// The server's signature of ``epoch``, ``next`` and ``digest`` (`nil` from a server that does
    /// not sign marks, and for a page past the head).
    public var signature: MarkSignature?
    /// The checksum of the events' JSON as it was received, when the page was decoded from its
    /// canonical form: the same as the events' own (``PageChecksum/init(events:)``) without
    /// encoding them again. `nil` once ``events`` changes.
    package internal(set) var receivedChecksum: PageChecksum?

    /// Creates a page.
    public init(
        events: [Event], next: UInt64, head: UInt64, epoch: String, digest: LogDigest, checksum: PageChecksum,
        signature: MarkSignature? = nil
    ) {
        self.signature = signature
        self.events = events
        self.next = next
        self.head = head
        self.epoch = epoch
        self.digest = digest
        self.checksum = checksum
    }
}

extension PullPage {
    /// Pages are equal when their events, cursor, head, epoch, digest, checksum and signature
    /// are: how a page was decoded does not count.
    public static func == (lhs: PullPage, rhs: PullPage) -> Bool {
        lhs.events == rhs.events && lhs.next == rhs.next && lhs.head == rhs.head && lhs.epoch == rhs.epoch
            && lhs.digest == rhs.digest && lhs.checksum == rhs.checksum && lhs.signature == rhs.signature
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(events)
        hasher.combine(next)
        hasher.combine(head)
        hasher.combine(epoch)
        hasher.combine(digest)
        hasher.combine(checksum)
        hasher.combine(signature)
    }
}
