import EventStore
import EventSync

/// Keeps the ``LogDigest`` at every seq of a served store's log, in the same transaction as the
/// events (so a page, a push answer and a continuity check always agree with the log).
///
/// Database `chain`: key = seq (8 bytes, big-endian), value = digest (8 bytes, big-endian).
struct LogDigestProjection: Projection {
    static let projectionName = "sync.log-digest"
    static let database = "chain"

    let name = LogDigestProjection.projectionName
    /// Version 2 chains each event's content digest too (version 1 chained ids only); a server
    /// store of version 1 is rebuilt when opened, and its clients start a new epoch once.
    let version = 2
    let databases = [LogDigestProjection.database]

    func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
        let seq = change.event.seq
        var previous = LogDigest.empty
        if seq > 1, let bytes = try context.value(forKey: bigEndian(seq - 1), in: LogDigestProjection.database) {
            previous = LogDigest(rawValue: decodeBigEndian(bytes))
        }
        let digest = previous.appending(change.event)
        try context.setValue(bigEndian(digest.rawValue), forKey: bigEndian(seq), in: LogDigestProjection.database)
    }
}
