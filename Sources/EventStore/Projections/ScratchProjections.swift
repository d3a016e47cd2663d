import Foundation
import LMDB

/// Projections built from the log into a temporary environment: for verification and replay.
///
/// The directory is deleted when the value goes away.
final class ScratchProjections {
    let directory: String
    let environment: Environment
    let databases: ProjectionDatabases
    let projector: ProjectionWriter

    init(configuration: Store.Configuration) throws {
        directory = NSTemporaryDirectory() + "eventstore-scratch-" + UUID().uuidString
        var options = Environment.Configuration()
        // Address space, not disk: a map that never grows during the build lets the replay keep
        // holding item records (a grown map makes a chunk run again, see ReplayRecords).
        options.mapSize = 1 << 33
        options.durability = .bulk
        options.maxDatabases = Schema.databaseCount(customProjections: configuration.projections)
        environment = try Environment.open(path: directory, configuration: options)
        databases = try environment.write { tx in
            try ProjectionDatabases(generation: 0, projections: configuration.projections) { name, options in
                try tx.openDatabase(named: name, options: options.union(.create))
            }
        }
        projector = ProjectionWriter(databases: databases, configuration: configuration)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Applies the store's events `1...through` that pass `include`, in log order; returns how
    /// many passed. The events are read ahead on another thread (``LogReadAhead``): the log's
    /// events up to `through` never change, so any snapshot that holds them reads the same ones.
    @discardableResult
    func build(
        from store: Store, through: UInt64, include: (Event) -> Bool = { _ in true },
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws -> UInt64 {
        do {
            return try build(from: store, through: through, include: include, holdingRecords: true, progress: progress)
        } catch is ReplayRestart {
            try environment.write { tx in
                for (_, database) in databases.all { try tx.removeAll(in: database) }
            }
            return try build(
                from: store, through: through, include: include, holdingRecords: false, progress: progress)
        }
    }

    private func build(
        from store: Store, through: UInt64, include: (Event) -> Bool, holdingRecords: Bool,
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws -> UInt64 {
        var applied: UInt64 = 0
        var included: UInt64 = 0
        projector.beginDeferredReplay(holdingRecords: holdingRecords)
        let events = LogReadAhead(
            environment: store.environment, database: store.schema.events, from: 1, through: through)
        defer { events.cancel() }
        repeat {
            let chunk = try environment.write { tx in
                let chunk = try store.replayChunk(
                    from: applied + 1, into: projector, tx: tx, limit: store.configuration.rebuildChunkEvents,
                    events: events, include: include)
                // The checkpoint is written even for an empty log, as a live store writes it.
                try projector.checkpoint(through: chunk.last, tx: tx)
                return chunk
            }
            events.commit()
            try projector.replayChunkCommitted(in: environment)
            included += chunk.applied
            if chunk.last <= applied { break }
            applied = chunk.last
            progress?(Store.Progress(processed: applied, total: through))
        } while applied < through
        try projector.indexItemsAfterReplay(in: environment)
        try projector.indexLiveItems(in: environment)
        return included
    }
}
