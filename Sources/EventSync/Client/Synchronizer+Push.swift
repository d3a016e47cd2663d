import EventStore

/// Pushing: pending local events in pages, the pushed cursor moved with each acknowledgement.
extension Synchronizer {
    func pushAll(_ cursor: inout SyncCursor, info: RemoteInfo?, report: inout SyncReport) async throws
        -> PhaseOutcome
    {
        let pageSize = max(1, min(configuration.pushPageSize, info?.limits.maxPushEvents ?? .max))
        let maxBytes = max(1024, min(configuration.maxPushBytes, (info?.limits.maxRequestBytes ?? .max) - 1024))
        var completed = 0
        let total = try pendingCount()
        // One replica id per push: this store's own events (under its current id and the ones
        // it left), or another replica's events relayed (the server may refuse a relay for a
        // replica another credential owns; that replica pushes them itself).
        let own = Set(try store.ownReplicaIDs())
        while true {
            try Task.checkCancellation()
            let from = cursor.pushed
            let (events, last) = try store.read { reader -> ([Event], UInt64) in
                var events: [Event] = []
                var bytes = 64
                var last = from
                try reader.forEachEvent(from: from + 1) { event in
                    // A page is a run of one replica's events, in log order.
                    if let first = events.first, first.id.origin != event.id.origin { return false }
                    let size = event.jsonBytes().count + 1
                    if !events.isEmpty && bytes + size > maxBytes { return false }
                    events.append(event)
                    bytes += size
                    last = event.seq
                    return events.count < pageSize
                }
                return (events, last)
            }
            guard !events.isEmpty else { return .done }
            publish(.pushing(SyncProgress(completed: completed, total: max(total, completed + events.count))))
            let origin = events[0].id.origin
            let relay = !own.contains(origin)
            let response: PushResponse
            do {
                response = try await transport.push(
                    PushRequest(replica: origin, events: events, relay: relay), check: cursor.check)
            } catch SyncError.Code.replicaNotOwned where relay {
                // Another credential owns that replica: it pushes its events itself.
                report.requests += 1
                report.relaysRefused += events.count
                cursor = try await advancePushed(through: last)
                completed += events.count
                continue
            }
            report.requests += 1
            if let epoch = cursor.epoch, response.epoch != epoch {
                cursor = try await adopt(epoch: response.epoch, report: &report)
                return .epochChanged
            }
            let key = cursorKey
            cursor = try await store.write { writer in
                var cursor = try SyncCursor.load(writer, key: key)
                cursor.epoch = response.epoch
                cursor.pushed = max(cursor.pushed, last)
                cursor.raiseMark(response.head, response.digest)
                try cursor.save(writer, key: key)
                return cursor
            }
            completed += events.count
            report.pushed += response.accepted
            report.duplicates += response.duplicates
            report.serverHead = max(report.serverHead, response.head)
        }
    }

    /// Moves the pushed position to `seq` (never back).
    private func advancePushed(through seq: UInt64) async throws -> SyncCursor {
        let key = cursorKey
        return try await store.write { writer in
            var cursor = try SyncCursor.load(writer, key: key)
            cursor.pushed = max(cursor.pushed, seq)
            try cursor.save(writer, key: key)
            return cursor
        }
    }
}
