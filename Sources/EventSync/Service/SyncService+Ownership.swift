import EventStore

/// Replica ownership: which credential may push under which replica id.
extension SyncService {
    /// The meta key prefix of replica owners (`sync.owner.<replica>` → credential id).
    static let ownerKeyPrefix = "sync.owner."

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

    /// Checks that `credential` may push under the request's replica id, and makes it the owner
    /// of an unowned one when it pushes its own events (in the push's own transaction, so a
    /// refused push claims nothing). A relay is refused for a replica id another credential
    /// owns, and claims nothing.
    static func claim(_ request: PushRequest, credential: SyncCredential, in writer: StoreWriter) throws {
        guard !credential.isOperator, !request.events.isEmpty else { return }
        if let owner = try owner(of: request.replica, in: writer) {
            guard owner == credential.id else {
                throw SyncError(
                    .replicaNotOwned,
                    request.relay
                        ? "replica \(request.replica) belongs to another credential: only it pushes that replica's events"
                        : "replica \(request.replica) belongs to another credential: a replica id is owned by the first "
                            + "credential that pushed under it (the client moves to a new replica id)",
                    eventID: request.events.first?.id)
            }
        } else if !request.relay {
            try writer.setMetadata(Array(credential.id.utf8), forKey: ownerKeyPrefix + request.replica.description)
        }
    }
}
