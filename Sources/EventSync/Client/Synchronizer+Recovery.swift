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
    /// and lowers the pushed position so that they are pushed under it.
    func leaveReplicaID(from id: EventID, reason: String, report: inout SyncReport) async throws {
        try await pushAgain(from: try store.firstSeqToMove(from: id))
        let change = try await store.restamp(from: id)
        report.replicaChanges.append(change)
        configuration.logger.warning(
            "this store reused replica ids published elsewhere (restored from a backup, or copied?): moved to a new id",
            metadata: [
                "remote": "\(remoteName)", "reason": "\(reason)", "previous": "\(change.previous)",
                "current": "\(change.current)", "restamped": "\(change.restamped.count)",
            ])
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
    /// are acknowledged as duplicates.
    func pushAgain(from seq: UInt64?) async throws {
        guard let seq else { return }
        try await store.write { writer in
            for (key, value) in try writer.metadata(withPrefix: SyncCursor.keyPrefix) {
                var cursor = try SyncCursor(decoding: value)
                guard cursor.pushed >= seq else { continue }
                cursor.pushed = seq - 1
                try cursor.save(writer, key: key)
            }
        }
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
