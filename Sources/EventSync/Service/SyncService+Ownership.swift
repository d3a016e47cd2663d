import EventStore

/// Replica ownership: which credential may push under which replica id.
extension SyncService {
    /// The meta key prefix of replica owners (`sync.owner.<replica>` → credential id).
    package static let ownerKeyPrefix = "sync.owner."

    /// The highest origin sequence of `replica`'s events the store holds (0 for none).
    static func highWater(of replica: ReplicaID, in reader: StoreReader) throws -> UInt64 {
        try reader.metadata(forKey: originKeyPrefix + replica.description).map(decodeBigEndian) ?? 0
    }

    /// The credential id that owns `replica` on the store, if any.
    static func owner(of replica: ReplicaID, in reader: StoreReader) throws -> String? {
        try reader.metadata(forKey: ownerKeyPrefix + replica.description).map { String(decoding: $0, as: UTF8.self) }
    }

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

    /// The meta key prefix of owners' declarations (`sync.declared.<replica>` → the epoch, NUL,
    /// then the highest origin sequence the owner said it holds, 8 bytes big-endian).
    package static let declaredKeyPrefix = "sync.declared."

    /// Checks that `credential` may push the request (in the push's own transaction, so a refused
    /// push claims nothing):
    ///
    /// - an unowned replica id or one the credential owns: always; a push of the replica's own
    ///   events makes the credential the owner of an unowned id, and its ``PushRequest/through``
    ///   is remembered for the current epoch (the highest declared in the epoch);
    /// - a replica id another credential owns: only events the store already holds (duplicates,
    ///   or conflicts that ingest refuses); the first event it lacks is refused with
    ///   ``SyncError/Code/replicaNotOwned`` — or, for a relay of an event above what the owner
    ///   declared in the current epoch, ``SyncError/Code/orphanedEvent`` (the relaying store
    ///   adopts it).
    static func claim(_ request: PushRequest, credential: SyncCredential, in writer: StoreWriter) throws {
        guard !credential.isOperator, !request.events.isEmpty else { return }
        let owner = try owner(of: request.replica, in: writer)
        if owner == nil || owner == credential.id {
            guard !request.relay else { return }
            if owner == nil {
                try writer.setMetadata(Array(credential.id.utf8), forKey: ownerKeyPrefix + request.replica.description)
            }
            if let through = request.through { try declare(through, for: request.replica, in: writer) }
            return
        }
        // Another credential's replica: what the store holds is acknowledged (ingest tells a
        // duplicate from a conflict); the first event it lacks decides.
        let declared = request.relay ? try declaredThrough(of: request.replica, in: writer) : nil
        for event in request.events where try writer.seq(of: event.id) == nil {
            if let declared, event.id.sequence > declared {
                throw SyncError(
                    .orphanedEvent,
                    "event \(event.id): its replica's owner synced since the server's last restore and holds nothing "
                        + "past \(request.replica)/\(declared); keep the write under an id of your own",
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

    /// Records that the owner of `replica` holds its events through `through`, for the current
    /// epoch: the highest any of the owner's devices declared in this epoch.
    private static func declare(_ through: UInt64, for replica: ReplicaID, in writer: StoreWriter) throws {
        let highest = max(through, try declaredThrough(of: replica, in: writer) ?? 0)
        try writer.setMetadata(
            Array(try currentEpoch(in: writer).utf8) + [0] + bigEndian(highest),
            forKey: declaredKeyPrefix + replica.description)
    }

    /// What the owner of `replica` declared it holds, when it declared it in the current epoch.
    static func declaredThrough(of replica: ReplicaID, in reader: StoreReader) throws -> UInt64? {
        guard let bytes = try reader.metadata(forKey: declaredKeyPrefix + replica.description),
            let separator = bytes.firstIndex(of: 0), bytes.count == separator + 9
        else { return nil }
        guard String(decoding: bytes[..<separator], as: UTF8.self) == (try currentEpoch(in: reader)) else { return nil }
        return decodeBigEndian(Array(bytes[(separator + 1)...]))
    }
}
