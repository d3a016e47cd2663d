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
    /// Whether the last build started over without holding item records: its map grew while it
    /// held them (see ``ReplayRecords``).
    private(set) var restarted = false

    init(configuration: Store.Configuration) throws {
        directory = NSTemporaryDirectory() + "eventstore-scratch-" + UUID().uuidString
        var options = Environment.Configuration()
        // Address space, not disk, as large as the store's: a map that does not grow during the
        // build lets the replay keep holding item records (a grown map makes a chunk run again,
        // and the build start over, see ReplayRecords).
        options.mapSize = configuration.mapSize
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
    /// many passed. The events are read ahead on another thread (``LogReadAhead``), each batch
    /// in a read transaction of its own.
    @discardableResult
    func build(
        from store: Store, through: UInt64, include: (Event) -> Bool = { _ in true },
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws -> UInt64 {
        try build(from: store, snapshot: nil, through: through, include: include, progress: progress)
    }

    /// ``build(from:through:include:progress:)`` reading every event from `snapshot`, on this
    /// thread: for a verify, which compares what it builds with that snapshot's projections
    /// (events can change in place when their replica id is retired, see
    /// ``Store/restamp(from:)``).
    func build(
        from store: Store, snapshot: StoreReader, through: UInt64, progress: (@Sendable (Store.Progress) -> Void)?
    ) throws {
        _ = try build(from: store, snapshot: snapshot.tx, through: through, include: { _ in true }, progress: progress)
    }

    private func build(
        from store: Store, snapshot: ReadTransaction?, through: UInt64, include: (Event) -> Bool,
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws -> UInt64 {
        do {
            return try build(
                from: store, snapshot: snapshot, through: through, include: include, holdingRecords: true,
                progress: progress)
        } catch is ReplayRestart {
            restarted = true
            try environment.write { tx in
                for (_, database) in databases.all { try tx.removeAll(in: database) }
            }
            return try build(
                from: store, snapshot: snapshot, through: through, include: include, holdingRecords: false,
                progress: progress)
        }
    }

    private func build(
        from store: Store, snapshot: ReadTransaction?, through: UInt64, include: (Event) -> Bool, holdingRecords: Bool,
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws -> UInt64 {
        projector.beginDeferredReplay(holdingRecords: holdingRecords)
        let events =
            if let snapshot {
                LogReadAhead(snapshot: snapshot, database: store.schema.events, from: 1, through: through)
            } else {
                LogReadAhead(environment: store.environment, database: store.schema.events, from: 1, through: through)
            }
        defer { events.cancel() }
        let (last, included) = try store.replayChunks(
            events, into: projector, in: environment, after: 0, include: include
        ) { last in
            progress?(Store.Progress(processed: last, total: through))
        }
        if last == 0 {
            // The checkpoint is written even for an empty log, as a live store writes it.
            try environment.write { tx in try projector.checkpoint(through: 0, tx: tx) }
        }
        try projector.indexItemsAfterReplay(in: environment)
        try projector.indexLiveItems(in: environment)
        return included
    }
}
