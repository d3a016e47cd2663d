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

    /// Applies the store's events `1...through` that pass `include`, in log order, reading one
    /// snapshot per chunk.
    func build(
        from store: Store, through: UInt64, include: @escaping (Event) -> Bool = { _ in true },
        progress: (@Sendable (Store.Progress) -> Void)?
    ) throws {
        try build(from: store, through: through, include: include, progress: progress) { body in
            try store.read { try body($0) }
        }
    }

    /// ``build(from:through:include:progress:)`` reading every chunk from one snapshot.
    func build(
        from store: Store, snapshot: StoreReader, through: UInt64, progress: (@Sendable (Store.Progress) -> Void)?
    ) throws {
        try build(from: store, through: through, include: { _ in true }, progress: progress) { try $0(snapshot) }
    }

    private func build(
        from store: Store, through: UInt64, include: @escaping (Event) -> Bool,
        progress: (@Sendable (Store.Progress) -> Void)?, source: ((StoreReader) throws -> UInt64) throws -> UInt64
    ) throws {
        do {
            try build(
                from: store, through: through, include: include, holdingRecords: true, progress: progress,
                source: source)
        } catch is ReplayRestart {
            try environment.write { tx in
                for (_, database) in databases.all { try tx.removeAll(in: database) }
            }
            try build(
                from: store, through: through, include: include, holdingRecords: false, progress: progress,
                source: source)
        }
    }

    private func build(
        from store: Store, through: UInt64, include: @escaping (Event) -> Bool, holdingRecords: Bool,
        progress: (@Sendable (Store.Progress) -> Void)?, source: ((StoreReader) throws -> UInt64) throws -> UInt64
    ) throws {
        var applied: UInt64 = 0
        projector.beginDeferredReplay(holdingRecords: holdingRecords)
        repeat {
            let end = try source { reader in
                try environment.write { tx in
                    let end =
                        applied < through
                        ? try store.replayChunk(
                            from: applied + 1, into: projector, tx: tx,
                            limit: min(store.configuration.rebuildChunkEvents, through - applied),
                            source: reader.tx, include: include)
                        : applied
                    // The checkpoint is written even for an empty log, as a live store writes it.
                    try projector.checkpoint(through: end, tx: tx)
                    return end
                }
            }
            try projector.replayChunkCommitted(in: environment)
            if end <= applied { break }
            applied = end
            progress?(Store.Progress(processed: applied, total: through))
        } while applied < through
        try projector.indexItemsAfterReplay(in: environment)
        try projector.indexLiveItems(in: environment)
    }
}
