import EventStore
import EventSync
import EventSyncService
import Logging

/// A deployment's stores spread over several PostgreSQL databases by name
/// (``PostgresPartitioning``): each request goes to the one database that holds its store, so
/// each store keeps every guarantee of ``PostgresSyncStorage``. No request is served until every
/// database has checked (or, on first use, recorded) its place, so that a process given one
/// database in the wrong place writes to none.
final class PartitionedSyncStorage: SyncStorage {
    private let partitions: [PostgresSyncStorage]

    init(_ partitions: [PostgresSyncStorage]) {
        self.partitions = partitions
    }

    /// The database that holds store `name`, once every database is ready.
    private func storage(for name: String) async throws -> PostgresSyncStorage {
        try await ready()
        return partitions[PostgresPartitioning.partition(of: name, count: partitions.count)]
    }

    /// Prepares every database at once (each does it once, then returns at once), each within
    /// its request timeout: one database that does not answer makes every request
    /// `unavailable` then, not when its connection attempts give up.
    private func ready() async throws {
        guard !partitions.allSatisfy(\.isPrepared) else { return }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for partition in partitions { group.addTask { try await partition.readyInTime() } }
            try await group.waitForAll()
        }
    }

    func info(_ name: String, check: ContinuityCheck?, replica: ReplicaID?, logger: Logger) async throws -> RemoteInfo {
        try await storage(for: name).info(name, check: check, replica: replica, logger: logger)
    }

    func push(_ name: String, _ push: CheckedPush, create: Bool, logger: Logger) async throws -> PushOutcome {
        try await storage(for: name).push(name, push, create: create, logger: logger)
    }

    func page(_ name: String, _ request: PageRequest, logger: Logger) async throws -> EncodedPage {
        try await storage(for: name).page(name, request, logger: logger)
    }

    /// The names in every partition, sorted.
    func storeNames() async throws -> [String] {
        try await ready()
        var names: [String] = []
        for partition in partitions { names += try await partition.storeNames() }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    func close() {
        for partition in partitions { partition.close() }
    }
}
