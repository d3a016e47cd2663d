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

    /// Creates a check.
    public init(epoch: String, seq: UInt64, digest: LogDigest) {
        self.epoch = epoch
        self.seq = seq
        self.digest = digest
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

    /// Creates an info.
    public init(store: String, head: UInt64, epoch: String, digest: LogDigest, limits: SyncLimits) {
        self.store = store
        self.head = head
        self.epoch = epoch
        self.digest = digest
        self.limits = limits
    }
}

/// A batch of events to append to a server store: `POST /v1/stores/{store}/events`.
public struct PushRequest: Sendable, Hashable {
    /// The pushing replica: the server answers with the highest origin seq it holds for it.
    public var replica: ReplicaID
    /// The events, in the pusher's log order. Their `seq` is ignored.
    public var events: [Event]

    /// Creates a push.
    public init(replica: ReplicaID, events: [Event]) {
        self.replica = replica
        self.events = events
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

    /// Creates a response.
    public init(
        accepted: Int, duplicates: Int, head: UInt64, digest: LogDigest, epoch: String, replica: ReplicaID,
        highWater: UInt64
    ) {
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
    public var events: [Event]
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

    /// Creates a page.
    public init(
        events: [Event], next: UInt64, head: UInt64, epoch: String, digest: LogDigest, checksum: PageChecksum
    ) {
        self.events = events
        self.next = next
        self.head = head
        self.epoch = epoch
        self.digest = digest
        self.checksum = checksum
    }
}
