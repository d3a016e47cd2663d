import EventStore
import EventSync

extension SyncLedger {
    /// Applies a checked push to the store, in the caller's transaction: a continuity check that
    /// proves a rewound log starts a new epoch; the credential's claim on the replica id; every
    /// event appended or found (one that fails throws, and the caller's transaction keeps
    /// nothing); the origins' high-water marks.
    ///
    /// Every backend applies pushes through this one function, so they decide alike.
    package mutating func apply(_ push: CheckedPush) throws -> PushOutcome {
        var rotated: String?
        if try continuityBroken(push.check) {
            let epoch = ReplicaID.random().description
            try setEpoch(epoch, key: .random())
            rotated = epoch
        }
        try claim(
            push.request, credential: push.credential,
            clockBound: HLCTimestamp(physical: push.serverTime &+ push.maxClockSkewMilliseconds, logical: 0))
        var accepted = 0
        var duplicates = 0
        var highWaters: [ReplicaID: UInt64] = [:]
        for (index, checked) in push.events.enumerated() {
            let event = checked.event
            do {
                switch try ingest(checked, maxSkewMilliseconds: push.maxClockSkewMilliseconds) {
                case .appended:
                    accepted += 1
                    highWaters[event.id.origin] = max(highWaters[event.id.origin] ?? 0, event.id.sequence)
                case .duplicate:
                    duplicates += 1
                }
            } catch {
                var failure = SyncService.syncError(error).prefixed("events[\(index)] (id \(event.id)): ")
                failure.eventID = failure.eventID ?? event.id
                throw failure
            }
        }
        for (origin, sequence) in highWaters where sequence > (try highWater(of: origin)) {
            try setHighWater(sequence, of: origin)
        }
        let replica = push.request.replica
        let mark = try headMark()
        let response = PushResponse(
            accepted: accepted, duplicates: duplicates, head: mark.head, digest: mark.digest, epoch: mark.epoch,
            replica: replica, highWater: try highWater(of: replica), signature: mark.signature)
        return PushOutcome(response: response, rotatedEpoch: rotated)
    }
}
