import EventStore
import Logging

/// Recovering from what a restored backup or a copied store leaves behind: a new server epoch, a
/// remote store that is gone, this store's replica id published elsewhere, another replica's event
/// id naming another event on the remote. Each moves positions or ids durably before the next
/// pass of ``Synchronizer/sync()``, so no write is lost.
extension Synchronizer {
    /// Adopts the server's epoch: the first one silently; a new one resets every position.
    func adopt(epoch: String, report: inout SyncReport) async throws -> SyncCursor {
        let key = cursorKey
        let (cursor, changed) = try await store.write { writer -> (SyncCursor, Bool) in
            var cursor = try SyncCursor.load(writer, key: key)
            let changed = cursor.epoch != nil && cursor.epoch != epoch
            if changed {
                cursor.reset(epoch: epoch)
            } else {
                cursor.epoch = epoch
            }
            try cursor.save(writer, key: key)
            return (cursor, changed)
        }
        if changed {
            report.epochChanged = true
            configuration.logger.warning(
                "server epoch changed: pushing everything again and pulling the log again",
                metadata: ["remote": "\(remoteName)", "epoch": "\(epoch)"])
        }
        return cursor
    }

    /// Moves this store's events from `id` on to a new replica id (``EventStore/Store/restamp(from:)``)
    /// and lowers the pushed position so that they are pushed under it. The store declares to
    /// every remote how far it now holds the id it leaves (it may have lost events of it that a
    /// peer relays).
    func leaveReplicaID(from id: EventID, reason: String, report: inout SyncReport) async throws {
        try await pushAgain(from: try store.firstSeqToMove(from: id), undeclaring: id.origin)
        record(
            try await store.restamp(from: id), reason: reason, in: &report,
            "this store reused replica ids published elsewhere (restored from a backup, or copied?): moved to a new id")
    }

    /// Adds a move to new ids to the report and logs it.
    private func record(
        _ change: Store.ReplicaIDChange, reason: String, in report: inout SyncReport, _ message: Logger.Message
    ) {
        report.replicaChanges.append(change)
        configuration.logger.warning(
            message,
            metadata: [
                "remote": "\(remoteName)", "reason": "\(reason)", "previous": "\(change.previous)",
                "current": "\(change.current)", "restamped": "\(change.restamped.count)",
            ])
    }

    /// Gives this store's events from the one `refusal` names on, which the server refused as
    /// stamped too far ahead of its clock, new stamps no later than the refusal's
    /// ``SyncError/clockBound`` (the server's clock plus its skew bound) under a new replica id,
    /// and sets the store's clock back (``EventStore/Store/restamp(from:notAfter:)``): a device
    /// whose clock ran ahead stamped them, and every later write would run ahead too.
    ///
    /// Only for an event of the store's current id stamped past the bound and not acknowledged by
    /// any remote (elsewhere it would be held twice, under both stamps), once the device's clock
    /// is right again (not past the bound); otherwise the refusal stands, saying what to do.
    func restampAhead(after refusal: SyncError, report: inout SyncReport) async throws {
        func refused(_ message: String) -> SyncError {
            SyncError(
                .clockSkew, message + " (\(refusal.message))", requestID: refusal.requestID, eventID: refusal.eventID,
                clockBound: refusal.clockBound, cause: refusal)
        }
        guard let id = refusal.eventID, let bound = refusal.clockBound, bound < 1 << 48,
            id.origin == (try store.currentIdentity().replica), let first = try store.firstSeqToMove(from: id),
            let (event, acknowledged) = try store.read({ reader -> (Event, Bool)? in
                guard let event = try reader.event(id: id) else { return nil }
                let acknowledged = try reader.metadata(withPrefix: SyncCursor.keyPrefix).contains { entry in
                    try SyncCursor(decoding: entry.value).pushed >= first
                }
                return (event, acknowledged)
            }),
            event.hlc.physical > bound
        else { throw refusal }
        let now = store.configuration.physicalClock()
        guard now <= bound else {
            throw refused(
                "this device's clock is \(now - bound) ms past what the server accepts (its clock plus its skew bound): "
                    + "set the device's clock right; the next sync then stamps the waiting events anew")
        }
        guard !acknowledged else {
            throw refused(
                "events from \(id) on were stamped while this device's clock ran ahead, and a remote has them already: "
                    + "they are not stamped anew")
        }
        try await pushAgain(from: first, undeclaring: id.origin)
        let change: Store.ReplicaIDChange
        do {
            change = try await store.restamp(from: id, notAfter: HLCTimestamp(physical: bound, logical: .max))
        } catch let error as EventStoreError where error.code == .clockSkew || error.code == .invalidEvent {
            throw refused("the events from \(id) on cannot be stamped anew: \(error.message)")
        }
        record(
            change, reason: refusal.message, in: &report,
            "events stamped while this device's clock ran ahead were stamped anew under a new replica id")
    }

    /// Moves another replica's event that the remote holds under the same id with other content
    /// to a new id of this store (``EventStore/Store/adopt(_:)``), to be pushed under it.
    func adoptConflicting(_ id: EventID, reason: String, report: inout SyncReport) async throws {
        try await pushAgain(from: try store.firstSeqToMove(from: id, single: true))
        let change = try await store.adopt(id)
        report.replicaChanges.append(change)
        configuration.logger.warning(
            "another replica's event id names another event on the remote: this store keeps its copy under a new id",
            metadata: [
                "remote": "\(remoteName)", "reason": "\(reason)", "event": "\(id)",
                "now": "\(change.restamped.first?.to.description ?? "-")",
            ])
    }

    /// Lowers the pushed position of every remote this store syncs with to just before `seq`,
    /// in one commit, *before* the events from there are moved to new ids: whenever the move
    /// commits (or a crash comes between), the moved events are pushed under their new ids, to
    /// this remote and to every other. Events below stay as they were; the ones re-offered above
    /// are acknowledged as duplicates. With `replica`, every remote also forgets that the store
    /// declared how far it holds that id, so that it declares it again.
    func pushAgain(from seq: UInt64?, undeclaring replica: ReplicaID? = nil) async throws {
        guard seq != nil || replica != nil else { return }
        try await store.write { writer in
            for (key, value) in try writer.metadata(withPrefix: SyncCursor.keyPrefix) {
                var cursor = try SyncCursor(decoding: value)
                var changed = false
                if let seq, cursor.pushed >= seq {
                    cursor.pushed = seq - 1
                    changed = true
                }
                if let replica, cursor.declared.removeValue(forKey: replica) != nil { changed = true }
                if changed { try cursor.save(writer, key: key) }
            }
        }
    }

    /// Forgets every position with the remote but its epoch, after the server answered that the
    /// log no longer holds this store's mark but did not sign it (``SyncError/Code/unverifiedMark``:
    /// a mark from before the server signed marks, or signed with a key a restore lost): the next
    /// pass pushes everything again and pulls the whole log again, as after a new epoch.
    func forgetPositions(report: inout SyncReport) async throws {
        _ = try await updateCursor { cursor in cursor.reset(epoch: cursor.epoch) }
        report.epochChanged = true
        configuration.logger.warning(
            "the server's log does not hold this store's continuity mark (restored from an older copy?), and the mark is not signed: pushing everything again and pulling the log again",
            metadata: ["remote": "\(remoteName)"])
    }

    /// Forgets every position with a remote whose store no longer exists.
    func forgetRemote(report: inout SyncReport) async throws -> SyncCursor {
        let key = cursorKey
        try await store.write { writer in try SyncCursor().save(writer, key: key) }
        report.epochChanged = true
        configuration.logger.warning(
            "the remote store no longer exists: pushing everything again",
            metadata: ["remote": "\(remoteName)"])
        return SyncCursor()
    }
}
