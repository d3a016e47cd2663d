import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import SyncTestSupport
import Synchronization
import Testing

/// A sync server (in process) and a set of replicas, each store in its own temporary directory,
/// with manual clocks.
final class SyncCluster: @unchecked Sendable {
    let directory = TemporaryDirectory(prefix: "eventsync-test")
    let serverClock: ManualClock
    private(set) var service: SyncService
    let storeName = "shared"
    private(set) var replicas: [Store] = []
    private(set) var clocks: [ManualClock] = []
    let limits: SyncLimits
    /// Where the server keeps its stores.
    let backend: SyncBackend

    var serverPath: String { directory.appending("server") }

    /// A cluster whose server keeps its stores in LMDB under ``serverPath``, or on `backend`.
    init(
        start: UInt64 = 1_800_000_000_000, serverSkew: Int64 = 0, limits: SyncLimits = SyncLimits(),
        backend: SyncBackend? = nil
    ) throws {
        serverClock = ManualClock(start: UInt64(Int64(start) + serverSkew))
        self.limits = limits
        self.backend = backend ?? .lmdb(dataDirectory: directory.appending("server"))
        service = try SyncCluster.makeService(backend: self.backend, clock: serverClock, limits: limits)
    }

    /// A cluster whose server runs on a backend of `kind`.
    static func make(_ kind: TestBackend, limits: SyncLimits = SyncLimits()) async throws -> SyncCluster {
        guard kind != .lmdb else { return try SyncCluster(limits: limits) }
        return try SyncCluster(limits: limits, backend: try await kind.make(dataDirectory: ""))
    }

    static func makeService(backend: SyncBackend, clock: ManualClock, limits: SyncLimits) throws -> SyncService {
        var configuration = SyncService.Configuration(backend: backend)
        configuration.storeConfiguration.durability = .bulk
        configuration.storeConfiguration.physicalClock = clock.function
        configuration.limits = limits
        return try SyncService(configuration: configuration)
    }

    /// Adds a replica whose clock runs `skew` ms from `start`.
    @discardableResult
    /// Adds a replica; with `copying`, its store starts as a copy of that store directory (a
    /// backup, or another device's store).
    func addReplica(start: UInt64 = 1_800_000_000_000, skew: Int64 = 0, copying source: String? = nil) throws -> Store {
        let clock = ManualClock(start: UInt64(Int64(start) + skew))
        let path = directory.appending("replica-\(replicas.count)")
        if let source { try FileManager.default.copyItem(atPath: source, toPath: path) }
        let store = try Store.open(at: path, configuration: SyncCluster.replicaConfiguration(clock))
        replicas.append(store)
        clocks.append(clock)
        return store
    }

    static func replicaConfiguration(_ clock: ManualClock) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.durability = .bulk
        configuration.physicalClock = clock.function
        return configuration
    }

    /// A copy of replica `index`'s store, taken now (`evstore backup`).
    func backUpReplica(_ index: Int) throws -> String {
        let path = directory.appending("backup-\(index)-\(UInt64.random(in: 0..<UInt64.max))")
        try replicas[index].backup(to: path)
        return path
    }

    /// Replaces replica `index`'s store with the copy at `backup`, as a device restored from a
    /// backup does; returns the reopened store. The caller must hold no reference to the old one.
    @discardableResult
    func restoreReplica(_ index: Int, from backup: String) throws -> Store {
        let path = replicas[index].path
        // The old store must be gone (no reference left) before the copy is opened at its path:
        // a process opens one storage environment per path.
        replicas.remove(at: index).close()
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        let store = try Store.open(at: path, configuration: SyncCluster.replicaConfiguration(clocks[index]))
        replicas.insert(store, at: index)
        return store
    }

    func transport(encodesJSON: Bool = false, credential: SyncCredential = .trusted) -> InProcessTransport {
        InProcessTransport(service: service, storeName: storeName, encodesJSON: encodesJSON, credential: credential)
    }

    func synchronizer(
        _ index: Int, transport: (any SyncTransport)? = nil, configuration: Synchronizer.Configuration = .init()
    )
        -> Synchronizer
    {
        Synchronizer(
            store: replicas[index], transport: transport ?? self.transport(), remoteName: "server",
            configuration: configuration)
    }

    /// Advances every clock (server's too) by `milliseconds`.
    func advance(by milliseconds: Int64) {
        serverClock.advance(by: milliseconds)
        for clock in clocks { clock.advance(by: milliseconds) }
    }

    /// Closes the service (its stores close); `restart()` opens a new one on the same directory.
    func stopServer() {
        service.close()
    }

    func restartServer() throws {
        service = try SyncCluster.makeService(backend: backend, clock: serverClock, limits: limits)
    }

    /// The server's store (LMDB backend only).
    func serverStore() async throws -> Store {
        try await service.store(named: storeName)
    }

    /// The server's log, in server order, read through pulls (any backend).
    func serverEvents() async throws -> [Event] {
        var events: [Event] = []
        var after: UInt64 = 0
        while true {
            let page = try await service.pull(store: storeName, after: after, limit: 1000)
            events += page.events
            guard page.next < page.head else { return events }
            after = page.next
        }
    }

    func close() {
        service.close()
        for store in replicas { store.close() }
        directory.remove()
    }
}

/// A transport that fails on purpose: before a chosen call, or after it (the server did the work
/// but the answer is lost), and records every call.
final class FaultyTransport: SyncTransport, @unchecked Sendable {
    enum Call: Equatable, Sendable {
        case info
        case push(firstSeq: UInt64, count: Int)
        case pull(after: UInt64)
    }

    enum Fault: Sendable {
        /// The call fails before reaching the server.
        case before
        /// The server handles the call; the answer is lost.
        case after
    }

    let base: any SyncTransport
    private let state = Mutex<(calls: [Call], faults: [Int: Fault])>(([], [:]))

    init(_ base: any SyncTransport) { self.base = base }

    var remoteIdentifier: String { base.remoteIdentifier }

    /// Makes call number `index` (0-based, counting every call) fail.
    func fail(call index: Int, _ fault: Fault) {
        state.withLock { $0.faults[index] = fault }
    }

    var calls: [Call] { state.withLock { $0.calls } }

    struct InjectedFailure: Error {}

    private func perform<T>(_ call: Call, _ body: () async throws -> T) async throws -> T {
        let fault = state.withLock { state -> Fault? in
            let index = state.calls.count
            state.calls.append(call)
            return state.faults.removeValue(forKey: index)
        }
        if fault == .before { throw SyncError(.transport, "injected failure before \(call)", cause: InjectedFailure()) }
        let result = try await body()
        if fault == .after { throw SyncError(.transport, "injected failure after \(call)", cause: InjectedFailure()) }
        return result
    }

    func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
        try await perform(.info) { try await base.info(check: check, replica: replica) }
    }

    func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
        try await perform(.push(firstSeq: request.events.first?.seq ?? 0, count: request.events.count)) {
            try await base.push(request, check: check)
        }
    }

    func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
        try await perform(.pull(after: after)) { try await base.pull(after: after, limit: limit, check: check) }
    }
}

/// Forwards every call to `base`, and hands each pull to `onPull`: where the pull starts, and a
/// function that asks `base` for the page (a test may change the page, or act before it asks).
struct PullHook: SyncTransport {
    let base: any SyncTransport
    let onPull: @Sendable (_ after: UInt64, _ fetch: @Sendable () async throws -> PullPage) async throws -> PullPage

    var remoteIdentifier: String { base.remoteIdentifier }

    func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
        try await base.info(check: check, replica: replica)
    }

    func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
        try await base.push(request, check: check)
    }

    func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
        try await onPull(after) { [base] in try await base.pull(after: after, limit: limit, check: check) }
    }
}

/// Appends `count` simple notes.
func appendNotes(_ store: Store, count: Int, prefix: String = "n") async throws {
    var changes: [Change] = []
    for index in 0..<count {
        changes.append(
            .put(
                "notes", id: "\(prefix)\(index)",
                fields: ["title": .string("note \(index) alpha"), "rank": .int(Int64(index))]))
        if changes.count == 500 {
            try await store.append(changes)
            changes.removeAll()
        }
    }
    if !changes.isEmpty { try await store.append(changes) }
}
