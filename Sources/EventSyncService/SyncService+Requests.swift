public import EventStore
public import EventSync
package import Logging

extension SyncService {
    // MARK: Info

    /// The state of a store: head, epoch, digest and limits (`GET /v1/stores/{store}`).
    ///
    /// - Parameters:
    ///   - name: The store name.
    ///   - check: The client's continuity mark, if it has one.
    /// - Throws: ``SyncError``: ``SyncError/Code/notFound`` for a missing store.
    ///   - replica: A replica id whose high-water mark the answer should carry
    ///     (``RemoteInfo/replicaHighWater``).
    public func info(store name: String, check: ContinuityCheck? = nil, replica: ReplicaID? = nil) async throws
        -> RemoteInfo
    {
        try await info(name, check: check, replica: replica, logger: configuration.logger)
    }

    /// ``info(store:check:replica:)`` with the request's logger.
    package func info(_ name: String, check: ContinuityCheck?, replica: ReplicaID?, logger: Logger) async throws
        -> RemoteInfo
    {
        do {
            try StoreName.validate(name)
            return try await storage.info(name, check: vetted(check), replica: replica, logger: logger)
        } catch {
            throw SyncService.syncError(error)
        }
    }

    // MARK: Push

    /// Appends a batch of events to a store, atomically and idempotently
    /// (`POST /v1/stores/{store}/events`).
    ///
    /// Every event is validated (names, fields, size, clock skew against the server's clock);
    /// one invalid event fails the whole batch and nothing is appended. An event the store
    /// already holds, byte for byte, is counted as a duplicate and not appended again; an id the
    /// store holds for *another* event fails the batch with ``SyncError/Code/eventConflict``.
    ///
    /// Unless `credential` is an operator's, every event must carry the pushing replica's id
    /// (``SyncError/Code/foreignOrigin``), and the replica id must be unowned or owned by
    /// `credential` (``SyncError/Code/replicaNotOwned``); the first push under a replica id
    /// makes `credential` its owner.
    ///
    /// - Parameters:
    ///   - name: The store name; a missing store is created when
    ///     ``Configuration/createsStoresOnPush`` is set and the push carries events.
    ///   - request: The events and the pushing replica.
    ///   - check: The client's continuity mark, if it has one.
    ///   - credential: Who pushes (``SyncCredential/trusted`` for a caller in this process).
    /// - Returns: The counts, the new head with its digest, the epoch and the pusher's high-water.
    /// - Throws: ``SyncError``: ``SyncError/Code/payloadTooLarge``, ``SyncError/Code/invalidEvent``,
    ///   ``SyncError/Code/clockSkew``, ``SyncError/Code/eventConflict``,
    ///   ``SyncError/Code/foreignOrigin``, ``SyncError/Code/replicaNotOwned``,
    ///   ``SyncError/Code/notFound``…
    public func push(
        store name: String, _ request: PushRequest, check: ContinuityCheck? = nil, credential: SyncCredential = .trusted
    ) async throws -> PushResponse {
        try await push(name, request, check: check, credential: credential, logger: configuration.logger)
    }

    /// ``push(store:_:check:credential:)`` with the request's logger.
    package func push(
        _ name: String, _ request: PushRequest, check: ContinuityCheck?, credential: SyncCredential, logger: Logger
    ) async throws -> PushResponse {
        let limits = configuration.limits
        guard request.events.count <= limits.maxPushEvents else {
            throw SyncError(
                .payloadTooLarge, "push of \(request.events.count) events (limit \(limits.maxPushEvents) per push)")
        }
        try SyncService.checkOrigins(request, credential: credential)
        let result: PushOutcome
        do {
            try StoreName.validate(name)
            let push = CheckedPush(
                request: request,
                events: try SyncService.check(request.events, limit: configuration.storeConfiguration.maxEventBytes),
                check: vetted(check), credential: credential,
                maxClockSkewMilliseconds: configuration.storeConfiguration.maxClockSkewMilliseconds,
                serverTime: configuration.storeConfiguration.physicalClock())
            // A declaration alone (no events) never creates a store.
            result = try await storage.push(
                name, push, create: configuration.createsStoresOnPush && !request.events.isEmpty, logger: logger)
        } catch {
            throw SyncService.syncError(error)
        }
        if let rotated = result.rotatedEpoch, let check {
            SyncService.logRotation(logger, name: name, check: check, epoch: rotated)
        }
        logger.debug(
            "push",
            metadata: [
                "store": "\(name)", "replica": "\(request.replica)", "accepted": "\(result.response.accepted)",
                "duplicates": "\(result.response.duplicates)", "head": "\(result.response.head)",
            ])
        return result.response
    }

    // MARK: Pull

    /// A page of a store's log after `after`, in server order
    /// (`GET /v1/stores/{store}/events?after=SEQ&limit=N`).
    ///
    /// - Parameters:
    ///   - name: The store name.
    ///   - after: The server seq the client has pulled through (0 for the start).
    ///   - limit: The most events wanted (`nil`: the default page size); clamped to the limits.
    ///   - check: The client's continuity mark, if it has one.
    ///   - wait: A live pull: when the log has nothing after `after`, how long to wait for an
    ///     event to be committed before answering (at most ``maxPullWait``); the page then holds
    ///     what came meanwhile, or nothing. Zero (the default) answers at once.
    /// - Throws: ``SyncError``: ``SyncError/Code/notFound``, ``SyncError/Code/invalidRequest``.
    public func pull(
        store name: String, after: UInt64, limit: Int? = nil, check: ContinuityCheck? = nil, wait: Duration = .zero
    ) async throws -> PullPage {
        let page = try await readPage(
            name, after: after, limit: limit, check: check, wait: wait, keepEvents: true, logger: configuration.logger)
        return PullPage(
            events: page.events, next: page.next, head: page.head, epoch: page.epoch, digest: page.digest,
            checksum: page.checksum, signature: page.signature)
    }

    func readPage(
        _ name: String, after: UInt64, limit: Int?, check: ContinuityCheck?, wait: Duration = .zero, keepEvents: Bool,
        logger: Logger
    ) async throws -> EncodedPage {
        let request = try pageRequest(after: after, limit: limit, check: check, wait: wait, keepEvents: keepEvents)
        do {
            try StoreName.validate(name)
            return try await storage.page(name, request, logger: logger)
        } catch {
            throw SyncService.syncError(error)
        }
    }

    /// What a pull asks of the storage: the page size within the limits, and a wait of at most
    /// the server's ``Configuration/pullWaitLimit``.
    ///
    /// - Throws: ``SyncError/Code/invalidRequest`` for a limit below 1 or a wait outside 0…25 s.
    package func pageRequest(after: UInt64, limit: Int?, check: ContinuityCheck?, wait: Duration, keepEvents: Bool)
        throws
        -> PageRequest
    {
        let limits = configuration.limits
        let wanted = min(limit ?? limits.defaultPageEvents, limits.maxPageEvents)
        guard wanted >= 1 else { throw SyncError(.invalidRequest, "limit must be at least 1") }
        // A server seq is at most 2^63 − 1 on every backend (PostgreSQL's bigint).
        guard after <= UInt64(Int64.max) else {
            throw SyncError(.invalidRequest, "after must be a server seq (0 to 2^63 − 1)")
        }
        guard wait >= .zero, wait <= SyncLimits.maxPullWait else {
            throw SyncError(
                .invalidRequest, "wait must be between 0 and \(SyncLimits.maxPullWait.components.seconds) seconds")
        }
        return PageRequest(
            after: after, limit: wanted, maxBytes: limits.maxPageBytes, check: vetted(check),
            wait: liveWaits.areEnded ? .zero : min(wait, configuration.pullWaitLimit), liveWaits: liveWaits,
            keepsEvents: keepEvents)
    }

    /// Checks every event of a push (names, fields, size), encoding each once.
    ///
    /// - Throws: ``EventSync/SyncError`` naming the first invalid event.
    private static func check(_ events: [Event], limit: Int) throws -> [CheckedEvent] {
        try events.enumerated().map { index, event in
            do {
                return try CheckedEvent(event, limit: limit)
            } catch {
                throw SyncService.syncError(error).prefixed("events[\(index)] (id \(event.id)): ")
            }
        }
    }

    // MARK: Wire form

    /// `GET /v1/stores/{store}`: the JSON body.
    package func infoJSON(_ name: String, check: ContinuityCheck?, replica: ReplicaID?, logger: Logger) async throws
        -> [UInt8]
    {
        try await info(name, check: check, replica: replica, logger: logger).jsonBytes()
    }

    /// `POST /v1/stores/{store}/events`: decodes the body (size first), pushes, encodes the answer.
    package func pushJSON(
        _ name: String, body: [UInt8], check: ContinuityCheck?, credential: SyncCredential, logger: Logger
    ) async throws -> [UInt8] {
        let limits = configuration.limits
        guard body.count <= limits.maxRequestBytes else {
            throw SyncError(.payloadTooLarge, "request body of \(body.count) bytes (limit \(limits.maxRequestBytes))")
        }
        let request = try PushRequest(json: body)
        return try await push(name, request, check: check, credential: credential, logger: logger).jsonBytes()
    }

    /// `GET /v1/stores/{store}/events`: the JSON body of a page.
    package func pullJSON(
        _ name: String, after: UInt64, limit: Int?, check: ContinuityCheck?, wait: Duration = .zero, logger: Logger
    ) async throws -> [UInt8] {
        let page = try await readPage(
            name, after: after, limit: limit, check: check, wait: wait, keepEvents: false, logger: logger)
        return PullPage.jsonBytes(
            eventsJSON: page.eventsJSON, next: page.next, head: page.head, epoch: page.epoch, digest: page.digest,
            checksum: page.checksum, signature: page.signature)
    }

    /// `check` as the storage weighs it: without a signature, trusted to prove a rewind when the
    /// service is configured to (``Configuration/trustsUnsignedMarks``).
    func vetted(_ check: ContinuityCheck?) -> ContinuityCheck? {
        guard configuration.trustsUnsignedMarks, var check, check.signature == nil else { return check }
        check.trustedUnsigned = true
        return check
    }

    /// Reads a continuity check from query parameters `epoch`, `mark` and `digest` (the three
    /// together, or none of them) and `signature` (with them, when the server signed the mark).
    ///
    /// - Returns: `nil` when none is given.
    /// - Throws: ``SyncError/Code/invalidRequest`` when one is given without the others, or for a
    ///   value outside its form: `epoch` is 32 lowercase hex digits, `mark` a server seq in
    ///   decimal digits (at most 2^63 − 1, like every seq in the protocol), `digest` and
    ///   `signature` 16 lowercase hex digits.
    package static func continuityCheck(
        epoch: String?, mark: String?, digest: String?, signature: String? = nil
    ) throws -> ContinuityCheck? {
        if epoch == nil && mark == nil && digest == nil {
            guard signature == nil else {
                throw SyncError(
                    .invalidRequest,
                    "\"signature\" signs a continuity check: send it with \"epoch\", \"mark\" and \"digest\"")
            }
            return nil
        }
        guard let epoch, let mark, let digest else {
            let missing = [("epoch", epoch), ("mark", mark), ("digest", digest)].filter { $0.1 == nil }.map(\.0)
            throw SyncError(
                .invalidRequest,
                "the continuity check needs \"epoch\", \"mark\" and \"digest\" together"
                    + " (missing: \(missing.joined(separator: ", ")))")
        }
        guard isLowercaseHex(epoch, count: 32) else {
            throw SyncError(.invalidRequest, "\"epoch\" must be an epoch the server reported (32 lowercase hex digits)")
        }
        guard let seq = decimal(mark), seq <= Int64.max else {
            throw SyncError(.invalidRequest, "\"mark\" must be a server seq (decimal digits, at most 2^63 − 1)")
        }
        guard isLowercaseHex(digest, count: 16), let parsed = LogDigest(hex: digest) else {
            throw SyncError(.invalidRequest, "\"digest\" must be a log digest (16 lowercase hex digits)")
        }
        var signed: MarkSignature?
        if let signature {
            guard isLowercaseHex(signature, count: 16), let parsedSignature = MarkSignature(hex: signature) else {
                throw SyncError(.invalidRequest, "\"signature\" must be a mark signature (16 lowercase hex digits)")
            }
            signed = parsedSignature
        }
        return ContinuityCheck(epoch: epoch, seq: seq, digest: parsed, signature: signed)
    }

    /// The number `text` spells in decimal digits alone (no sign, no space), or `nil`: the one
    /// form of a number in the protocol's query parameters.
    package static func decimal(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(text)
    }

    /// Whether `text` is exactly `count` digits of `0-9a-f`.
    private static func isLowercaseHex(_ text: String, count: Int) -> Bool {
        text.utf8.count == count
            && text.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            }
    }
}
