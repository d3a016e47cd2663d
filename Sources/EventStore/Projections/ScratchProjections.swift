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
    /// Whether the last build started over: its map grew while it held item records (see
    /// ``ReplayRecords``).
    private(set) var restarted = false
    /// The passes over the log the last build made (see ``ReplayPasses``).
    private(set) var passes = 0

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

    /// Applies the store's events `1...through` that pass `include`, each item's in log order
    /// (in passes over the log when its items do not fit in memory, see ``ReplayPasses``);
    /// returns how many passed. The events are read ahead on another thread (``LogReadAhead``),
    /// each batch in a read transaction of its own.
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
        try Store.attemptingReplay(progress: progress) { _ in
            restarted = true
            try environment.write { tx in
                for (_, database) in databases.all { try tx.removeAll(in: database) }
            }
        } _: { holdingRecords, progress in
            try build(
                from: store, snapshot: snapshot, through: through, include: include, holdingRecords: holdingRecords,
                progress: progress)
        }
    }

    private func build(
        from store: Store, snapshot: ReadTransaction?, through: UInt64, include: (Event) -> Bool, holdingRecords: Bool,
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws -> UInt64 {
        projector.beginDeferredReplay(holdingRecords: holdingRecords)
        let replayed = try store.replayInPasses(
            through: through, snapshot: snapshot, into: projector, in: environment, holdingRecords: holdingRecords,
            include: include
        ) { processed in
            progress?(Store.Progress(processed: processed, total: through))
        }
        passes = replayed.passes
        try projector.indexItemsAfterReplay(in: environment)
        projector.endDeferredReplay()
        return replayed.applied
    }
}
