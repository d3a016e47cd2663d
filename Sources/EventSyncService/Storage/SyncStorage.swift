package import EventStore
package import EventSync
package import Logging

/// What a ``SyncBackend`` implements: the three protocol operations on named stores, after the
/// ``SyncService`` checked the request (names, limits, origins, every event's form).
///
/// An implementation keeps, per store, the log in server order (seqs dense from 1, in commit
/// order), the epoch, the ``EventSync/LogDigest`` at every seq and the replica records of
/// ``SyncLedger``; it applies a push with ``SyncLedger/apply(_:)`` in one transaction, so that
/// every backend takes the same decisions.
package protocol SyncStorage: Sendable {
    /// The state of a store (a continuity check that proves a rewound log starts a new epoch first).
    func info(_ name: String, check: ContinuityCheck?, replica: ReplicaID?, logger: Logger) async throws -> RemoteInfo
    /// Applies a push in one transaction; creates a missing store when `create` is set.
    func push(_ name: String, _ push: CheckedPush, create: Bool, logger: Logger) async throws -> PushOutcome
    /// A page of the log, after the continuity check and the live wait.
    func page(_ name: String, _ request: PageRequest, logger: Logger) async throws -> EncodedPage
    /// The names of the stores held, sorted.
    func storeNames() async throws -> [String]
    /// Releases what the storage holds (open stores, connections). Later calls fail with
    /// ``EventSync/SyncError/Code/unavailable``.
    func close()
}

/// A push whose request and events were checked.
package struct CheckedPush: Sendable {
    /// The request as received.
    package var request: PushRequest
    /// Its events, each checked and encoded once.
    package var events: [CheckedEvent]
    /// The client's continuity mark.
    package var check: ContinuityCheck?
    /// Who pushes.
    package var credential: SyncCredential
    /// How far ahead of the server's clock a stamp may be.
    package var maxClockSkewMilliseconds: UInt64
    /// The server's clock (milliseconds since 1970) for the skew check, where the backend has
    /// no clock of its own (an LMDB store uses its own, configured the same way).
    package var serverTime: UInt64
}

/// What a push did: the answer, and the new epoch when its continuity check started one.
package struct PushOutcome: Sendable {
    /// The answer.
    package var response: PushResponse
    /// The epoch the push started, if it started one.
    package var rotatedEpoch: String?
}

/// A pull, checked.
package struct PageRequest: Sendable {
    /// The seq the client pulled through.
    package var after: UInt64
    /// The most events wanted (at least 1).
    package var limit: Int
    /// A page stops growing at this many bytes of JSON (it holds at least one event).
    package var maxBytes: Int
    /// The client's continuity mark.
    package var check: ContinuityCheck?
    /// How long to wait for an event after `after` when there is none (zero: answer at once).
    package var wait: Duration
    /// What ends the wait early: the service's graceful shutdown.
    package var liveWaits: LiveWaits
    /// Whether the page keeps the decoded events (``SyncService/pull(store:after:limit:check:wait:)``)
    /// or only their JSON (the HTTP answer).
    package var keepsEvents: Bool
}

/// A page of the log: its events' JSON (and the events, when asked), its position and checksum.
package struct EncodedPage: Sendable {
    package var events: [Event] = []
    package var eventsJSON: [UInt8] = []
    package var count = 0
    package var next: UInt64
    package var head: UInt64
    package var epoch: String
    package var digest = LogDigest.empty
    package var checksum = PageChecksum(rawValue: 0)
    /// The signature of the mark at ``next`` (`nil` when the epoch has no key, or for a page past
    /// the head).
    package var signature: MarkSignature?
}
