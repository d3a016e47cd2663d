import EventStore

/// Pushing: pending local events in pages, the pushed cursor moved with each acknowledgement.
///
/// A page is a run of one replica's events in log order: this store's own events (under its
/// current id and the ones it left, declaring how far it holds that id), or another replica's
/// events relayed. A relay the server will not take yet — another credential owns that replica
/// and has not pushed the events since the server's last restore, or they are stamped too far
/// ahead of the server's clock — is kept aside in the cursor
/// (``SyncCursor/deferredRelays``) and offered again on every sync.
extension Synchronizer {
    func pushAll(_ cursor: inout SyncCursor, info: RemoteInfo?, report: inout SyncReport) async throws
        -> PhaseOutcome
    {
        let pageSize = max(1, min(configuration.pushPageSize, info?.limits.maxPushEvents ?? .max))
        let maxBytes = max(1024, min(configuration.maxPushBytes, (info?.limits.maxRequestBytes ?? .max) - 1024))
        var completed = 0
        let total = try pendingCount()
        let own = Set(try store.ownReplicaIDs())
        if case .epochChanged = try await retryDeferredRelays(&cursor, own: own, report: &report) {
            return .epochChanged
        }
        while true {
            try Task.checkCancellation()
            let from = cursor.pushed
            let (events, last) = try store.read { reader -> ([Event], UInt64) in
                var events: [Event] = []
                var bytes = 64
                var last = from
                try reader.forEachEvent(from: from + 1) { event in
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
            guard !events.isEmpty else { return try await declareHoldings(&cursor, report: &report) }
            publish(.pushing(SyncProgress(completed: completed, total: max(total, completed + events.count))))
            let origin = events[0].id.origin
            let declaredAt = own.contains(origin) ? store.configuration.physicalClock() : nil
            let response: PushResponse
            do {
                response = try await push(events, of: origin, own: own, check: cursor.check)
            } catch let error as SyncError where Synchronizer.defersRelay(error) && !own.contains(origin) {
                report.requests += 1
                report.relaysRefused += events.count
                cursor = try await updateCursor { cursor in
                    cursor.pushed = max(cursor.pushed, last)
                    let known = Set(cursor.deferredRelays)
                    cursor.deferredRelays += events.map(\.seq).filter { !known.contains($0) }
                }
                completed += events.count
                continue
            }
            report.requests += 1
            if let epoch = cursor.epoch, response.epoch != epoch {
                cursor = try await adopt(epoch: response.epoch, report: &report)
                return .epochChanged
            }
            cursor = try await updateCursor { cursor in
                cursor.epoch = response.epoch
                cursor.pushed = max(cursor.pushed, last)
                cursor.raiseMark(response.head, response.digest, response.signature)
                if let declaredAt { cursor.declared[origin] = declaredAt }
            }
            completed += events.count
            report.pushed += response.accepted
            report.duplicates += response.duplicates
            report.serverHead = max(report.serverHead, response.head)
        }
    }

    /// Pushes one replica's events (or none: a declaration alone): as its own (declaring how far
    /// this store holds that id) or as a relay.
    private func push(_ events: [Event], of origin: ReplicaID, own: Set<ReplicaID>, check: ContinuityCheck?)
        async throws -> PushResponse
    {
        let relay = !own.contains(origin)
        // Declared in one writer turn: no write of the store is half done while it is read.
        let declared = relay ? nil : try await store.write { try $0.syncDeclaration(of: origin) }
        let request = PushRequest(
            replica: origin, events: events, relay: relay, through: declared?.through, clock: declared?.clock)
        return try await transport.push(request, check: check)
    }

    /// Declares how far this store holds each of its replica ids whose declaration is due, with
    /// a push of no events: the current id when ``Configuration/declarationInterval`` has passed
    /// since its last declaration in the server's epoch (by the physical clock), an id the store
    /// left when it has none there. Until its owner declares, a peer's relay of a write the owner
    /// lost waits on the server; the declaration lets the server answer it
    /// (``SyncError/Code/orphanedEvent``).
    private func declareHoldings(_ cursor: inout SyncCursor, report: inout SyncReport) async throws -> PhaseOutcome {
        guard cursor.epoch != nil else { return .done }  // no remote store yet: nothing to declare to
        let ids = try store.ownReplicaIDs()
        let own = Set(ids)
        // A current id the store never wrote under holds nothing it could have lost.
        let wrote = try store.currentIdentity().originSequence > 0
        let interval = configuration.declarationInterval.inSeconds * 1000
        let now = store.configuration.physicalClock()
        for (index, replica) in ids.enumerated() {
            let due: Bool
            if index > 0 {
                due = cursor.declared[replica] == nil  // an id the store left: once per epoch
            } else if let last = cursor.declared[replica] {
                // A clock that stepped back since (`last` ahead of now) declares at once.
                due = wrote && (now < last || Double(now - last) >= interval)
            } else {
                due = wrote
            }
            guard due else { continue }
            try Task.checkCancellation()
            let response = try await push([], of: replica, own: own, check: cursor.check)
            report.requests += 1
            if let epoch = cursor.epoch, response.epoch != epoch {
                cursor = try await adopt(epoch: response.epoch, report: &report)
                return .epochChanged
            }
            cursor = try await updateCursor { cursor in
                cursor.raiseMark(response.head, response.digest, response.signature)
                cursor.declared[replica] = now
            }
        }
        return .done
    }

    /// Offers the relays the server refused before, one replica's run at a time; those it takes
    /// (or that became this store's own, adopted) leave the list.
    private func retryDeferredRelays(_ cursor: inout SyncCursor, own: Set<ReplicaID>, report: inout SyncReport)
        async throws -> PhaseOutcome
    {
        guard !cursor.deferredRelays.isEmpty else { return .done }
        let events = try store.read { reader in try cursor.deferredRelays.compactMap { try reader.event(at: $0) } }
        var index = 0
        while index < events.count {
            let origin = events[index].id.origin
            var run: [Event] = []
            while index < events.count, events[index].id.origin == origin, run.count < configuration.pushPageSize {
                run.append(events[index])
                index += 1
            }
            let seqs = Set(run.map(\.seq))
            guard !own.contains(origin) else {
                cursor = try await updateCursor { $0.deferredRelays.removeAll { seqs.contains($0) } }
                continue
            }
            let response: PushResponse
            do {
                response = try await push(run, of: origin, own: own, check: cursor.check)
                report.requests += 1
            } catch let error as SyncError where Synchronizer.defersRelay(error) {
                report.requests += 1
                report.relaysRefused += run.count
                continue
            }
            if let epoch = cursor.epoch, response.epoch != epoch {
                cursor = try await adopt(epoch: response.epoch, report: &report)
                return .epochChanged
            }
            cursor = try await updateCursor { cursor in
                cursor.deferredRelays.removeAll { seqs.contains($0) }
                cursor.raiseMark(response.head, response.digest, response.signature)
            }
            report.pushed += response.accepted
            report.duplicates += response.duplicates
        }
        return .done
    }

    /// Whether the server's refusal of a relay leaves it waiting in the cursor rather than
    /// failing the sync: its owner has not pushed it yet (``SyncError/Code/replicaNotOwned``),
    /// or it is stamped further ahead of the server's clock than the server takes
    /// (``SyncError/Code/clockSkew``: its author's clock ran ahead; the server takes it once its
    /// own clock is near). Either way it waits, and never holds up this store's other events.
    static func defersRelay(_ error: SyncError) -> Bool {
        error.code == .replicaNotOwned || error.code == .clockSkew
    }

    /// Applies `change` to the stored cursor in one write and returns it.
    func updateCursor(_ change: @escaping @Sendable (inout SyncCursor) -> Void) async throws -> SyncCursor {
        let key = cursorKey
        return try await store.write { writer in
            var cursor = try SyncCursor.load(writer, key: key)
            change(&cursor)
            try cursor.save(writer, key: key)
            return cursor
        }
    }
}
