import EventStore
import EventSync

/// Replica ownership: which credential may push under which replica id.
extension SyncLedger {
    /// Checks that `credential` may push `request` (in the push's own transaction, so a refused
    /// push claims nothing):
    ///
    /// - a replica id of the served store itself (``SyncLedgerReading/hostReplica(_:)``): only
    ///   events the store already holds; a relay of another under its current id is
    ///   ``EventSync/SyncError/Code/orphanedEvent``, anything else
    ///   ``EventSync/SyncError/Code/replicaNotOwned``;
    /// - an unowned replica id or one the credential owns: always; a push of the replica's own
    ///   events makes the credential the owner of an unowned id, and its ``EventSync/PushRequest/through``
    ///   is remembered for the current epoch (the highest declared in the epoch). A push of no
    ///   events declares alone: for an id the credential owns (it claims no id);
    /// - a replica id another credential owns: only events the store already holds (duplicates,
    ///   or conflicts that ingest refuses); the first event it lacks is refused with
    ///   ``EventSync/SyncError/Code/replicaNotOwned`` — or, for a relay of an event the owner
    ///   disowned in the current epoch (past what it declared, and stamped before the declaring
    ///   push: see ``ReplicaDeclaration/disowns(_:)``), ``EventSync/SyncError/Code/orphanedEvent``
    ///   (the relaying store adopts it). A relayed event stamped after the owner's last declaring
    ///   push may be one the owner wrote since and will push: it waits, as any other relay of an
    ///   owned replica.
    ///
    /// `clockBound` is the most a push's ``EventSync/PushRequest/clock`` counts for: the
    /// server's time plus its skew bound, as for the events' stamps.
    mutating func claim(_ request: PushRequest, credential: SyncCredential, clockBound: HLCTimestamp) throws {
        guard !credential.isOperator else { return }
        let host = try hostReplica(request.replica)
        if host != .none {
            // The served store's own id: what it holds is acknowledged, nothing new is taken. It
            // holds every event of its current id, so a relayed one it lacks was lost (a
            // restore): the relaying store keeps the write under an id of its own. (Under a
            // retired id the event may have moved to the new id: the relay waits.)
            for event in request.events where try !holds(event.id) {
                if request.relay && host == .current {
                    throw SyncError(
                        .orphanedEvent,
                        "event \(event.id): replica \(request.replica) is the served store's own, and the store does "
                            + "not hold this event (it lost it, or never wrote it); keep the write under an id of your own",
                        eventID: event.id)
                }
                throw SyncError(
                    .replicaNotOwned,
                    "replica \(request.replica) is the served store's own: only that store writes under it",
                    eventID: event.id)
            }
            return
        }
        let owner = try owner(of: request.replica)
        if owner == nil || owner == credential.id {
            guard !request.relay else { return }
            if owner == nil {
                // An id is claimed by pushing events under it, never by a declaration alone.
                guard !request.events.isEmpty else { return }
                try setOwner(credential.id, of: request.replica)
            }
            if let through = request.through {
                // The events' greatest stamp and the owner's declared clock (no further than the
                // server's): the owner gives every later event a greater stamp.
                let declared = min(request.clock ?? .zero, clockBound).rawValue
                let stamped = request.events.reduce(declared) { max($0, $1.hlc.rawValue) }
                let previous = try currentDeclaration(of: request.replica)
                try setDeclaration(
                    ReplicaDeclaration(
                        epoch: try epoch(), through: max(through, previous?.through ?? 0),
                        stamped: max(stamped, previous?.stamped ?? 0)),
                    of: request.replica)
            }
            return
        }
        // Another credential's replica: what the store holds is acknowledged (ingest tells a
        // duplicate from a conflict); the first event it lacks decides.
        let declared = request.relay ? try currentDeclaration(of: request.replica) : nil
        for event in request.events where try !holds(event.id) {
            if let declared, declared.disowns(event) {
                throw SyncError(
                    .orphanedEvent,
                    "event \(event.id): its replica's owner synced since the server's last restore, after this event "
                        + "was written, and holds nothing past \(request.replica)/\(declared.through); keep the write "
                        + "under an id of your own",
                    eventID: event.id)
            }
            throw SyncError(
                .replicaNotOwned,
                request.relay
                    ? "replica \(request.replica) belongs to another credential: only it pushes that replica's new events"
                    : "replica \(request.replica) belongs to another credential: a replica id is owned by the first "
                        + "credential that pushed under it (the client moves its events from \(event.id) on to a new "
                        + "replica id)",
                eventID: event.id)
        }
    }
}

extension SyncLedgerReading {
    /// What the owner of `replica` declared it holds, when it declared it in the current epoch.
    func currentDeclaration(of replica: ReplicaID) throws -> ReplicaDeclaration? {
        guard let declaration = try declaration(of: replica), declaration.epoch == (try epoch()) else { return nil }
        return declaration
    }
}

extension SyncService {
    /// Refuses a push that carries another replica's events, unless an operator pushes it.
    static func checkOrigins(_ request: PushRequest, credential: SyncCredential) throws {
        guard !credential.isOperator else { return }
        for (index, event) in request.events.enumerated() where event.id.origin != request.replica {
            throw SyncError(
                .foreignOrigin,
                "events[\(index)] (id \(event.id)) belongs to replica \(event.id.origin), but the push is from replica "
                    + "\(request.replica): a replica pushes only its own events", eventID: event.id)
        }
    }
}
