public import EventStore
public import EventSync

/// A transport that calls a ``SyncService`` in the same process: no sockets, the same protocol
/// semantics (validation, limits, idempotency, epochs, checksums).
///
/// ```swift
/// let service = try SyncService(configuration: .init(dataDirectory: serverPath))
/// let report = try await Synchronizer(
///     store: phone, transport: InProcessTransport(service: service, storeName: "notes")
/// ).sync()
/// ```
///
/// With `encodesJSON`, every message goes through its JSON wire form both ways, exactly like
/// over HTTP (slower; it exercises the codec).
public struct InProcessTransport: SyncTransport {
    /// The service called.
    public let service: SyncService
    /// The store's name on the service.
    public let storeName: String
    /// Whether messages are encoded to JSON and decoded again.
    public let encodesJSON: Bool
    /// Who pushes: ``SyncCredential/trusted`` by default (the caller is in the service's process).
    public let credential: SyncCredential

    /// Creates a transport to `storeName` on `service`.
    public init(
        service: SyncService, storeName: String, encodesJSON: Bool = false, credential: SyncCredential = .trusted
    ) {
        self.service = service
        self.storeName = storeName
        self.encodesJSON = encodesJSON
        self.credential = credential
    }

    /// The backend and the store: `local:<data directory>/<store>` for the LMDB backend.
    public var remoteIdentifier: String { "\(service.configuration.backend)/\(storeName)" }

    /// Calls ``SyncService/info(store:check:replica:)``.
    public func info(check: ContinuityCheck?, replica: ReplicaID?) async throws -> RemoteInfo {
        let logger = service.configuration.logger
        if encodesJSON {
            return try RemoteInfo(
                json: try await service.infoJSON(storeName, check: check, replica: replica, logger: logger))
        }
        return try await service.info(storeName, check: check, replica: replica, logger: logger)
    }

    /// Calls ``SyncService/push(store:_:check:credential:)`` with ``credential``.
    public func push(_ request: PushRequest, check: ContinuityCheck?) async throws -> PushResponse {
        let logger = service.configuration.logger
        if encodesJSON {
            let body = try await service.pushJSON(
                storeName, body: request.jsonBytes(), check: check, credential: credential, logger: logger)
            return try PushResponse(json: body)
        }
        return try await service.push(storeName, request, check: check, credential: credential, logger: logger)
    }

    /// Calls ``SyncService/pull(store:after:limit:check:)``.
    public func pull(after: UInt64, limit: Int, check: ContinuityCheck?) async throws -> PullPage {
        try await pull(after: after, limit: limit, check: check, wait: .zero)
    }

    /// `true`: pulls can wait on the server.
    public var supportsLivePull: Bool { true }

    /// A live pull, waiting in the service (see ``SyncService/pull(store:after:limit:check:wait:)``).
    public func pull(after: UInt64, limit: Int, check: ContinuityCheck?, wait: Duration) async throws -> PullPage {
        let wait = min(max(wait, .zero), SyncLimits.maxPullWait)
        if encodesJSON {
            let body = try await service.pullJSON(
                storeName, after: after, limit: limit, check: check, wait: wait, logger: service.configuration.logger)
            return try PullPage(json: body)
        }
        return try await service.pull(store: storeName, after: after, limit: limit, check: check, wait: wait)
    }
}
