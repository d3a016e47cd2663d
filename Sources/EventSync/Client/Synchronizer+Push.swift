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
        while true {
            try Task.checkCancellation()
            let from = cursor.pushed
            let (events, last) = try store.read { reader -> ([Event], UInt64) in
                var events: [Event] = []
                var bytes = 64
                var last = from
                try reader.forEachEvent(from: from + 1) { event in
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
            let response = try await transport.push(
                PushRequest(replica: store.replicaID, events: events), check: cursor.check)
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
}
