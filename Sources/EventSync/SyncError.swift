public import EventStore

/// An error from sync: a code to match on, a message for people, and the cause.
///
/// Servers send errors as problem details (`application/problem+json`, RFC 9457); the
/// ``HTTPTransport`` turns them back into `SyncError`s with the same ``code``.
///
/// ```swift
/// do {
///     try await synchronizer.sync()
/// } catch let error as SyncError where error.code == .unauthorized {
///     print("check the token:", error.message)
/// }
/// ```
public struct SyncError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of error this is, with the HTTP status it maps to. Extensible: match on the
    /// static values.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name, such as `clock-skew`; the last part of the problem `type`.
        public let name: String
        /// The HTTP status of the problem response (`0` for errors that never cross the wire).
        public let status: Int
        /// A short human title for the problem response.
        public let title: String

        init(_ name: String, _ status: Int, _ title: String) {
            self.name = name
            self.status = status
            self.title = title
        }

        /// The code's name.
        public var description: String { name }

        /// Two codes are the same when their names are.
        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.name == rhs.name }
        /// Hashes the name.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        /// No `Authorization: Bearer` token, or one the server does not know (401).
        public static let unauthorized = Code("unauthorized", 401, "Unauthorized")
        /// The token does not grant the store (403).
        public static let forbidden = Code("forbidden", 403, "Forbidden")
        /// The store does not exist on the server (404).
        public static let notFound = Code("store-not-found", 404, "Store not found")
        /// The store name is not valid (400).
        public static let invalidStoreName = Code("invalid-store-name", 400, "Invalid store name")
        /// The request body is not valid JSON or not shaped as the protocol says (400).
        public static let malformedBody = Code("malformed-body", 400, "Malformed body")
        /// A query parameter is missing or invalid (400).
        public static let invalidRequest = Code("invalid-request", 400, "Invalid request")
        /// An event is invalid: bad names, fields or stamps (422).
        public static let invalidEvent = Code("invalid-event", 422, "Invalid event")
        /// An event is stamped further ahead of the receiver's clock than the skew bound (422).
        public static let clockSkew = Code("clock-skew", 422, "Clock skew")
        /// The request has more events or bytes than the server's limits (413).
        public static let payloadTooLarge = Code("payload-too-large", 413, "Payload too large")
        /// A request body that did not arrive in time.
        public static let requestTimeout = Code("request-timeout", 408, "Request timeout")
        /// A push whose body is not declared as `application/json`.
        public static let unsupportedMediaType = Code("unsupported-media-type", 415, "Unsupported media type")
        /// The server is shutting down or the store is closed (503).
        public static let unavailable = Code("unavailable", 503, "Service unavailable")
        /// The server's disk is full: the request changed nothing; retry once space is freed (507).
        public static let insufficientStorage = Code("insufficient-storage", 507, "Insufficient storage")
        /// The server failed (500).
        public static let internalError = Code("internal-error", 500, "Internal server error")
        /// The server could not be reached, or the connection failed.
        public static let transport = Code("transport", 0, "Transport failure")
        /// The server's answer breaks the protocol (bad checksum, events out of order…).
        public static let protocolViolation = Code("protocol-violation", 0, "Protocol violation")
        /// The local store refused an operation.
        public static let local = Code("local-store", 0, "Local store error")

        /// A pushed or pulled event carries an id that already names another event (409). The
        /// problem's `eventId` names it; see ``SyncError/eventID``.
        public static let eventConflict = Code("event-conflict", 409, "Event id conflict")
        /// The push's replica id belongs to another credential (403): the first credential that
        /// pushed under a replica id owns it.
        public static let replicaNotOwned = Code("replica-not-owned", 403, "Replica owned by another credential")
        /// A relayed event of a replica whose owner, syncing in the current epoch, declared it no
        /// longer holds it (409): the relaying store keeps the write under an id of its own
        /// (``EventStore/Store/adopt(_:)``). ``SyncError/eventID`` names it.
        public static let orphanedEvent = Code("orphaned-event", 409, "Event its owner no longer has")
        /// A push carries events of a replica other than the pushing one (403).
        public static let foreignOrigin = Code("foreign-origin", 403, "Events of another replica")
        /// The request's continuity check claims the server's log was rewound (its mark is past the
        /// head, or the digest there differs), but the server did not sign that mark (409): it
        /// does not start a new epoch on the client's word. The request changed nothing. A
        /// ``Synchronizer`` then forgets its positions with the server and syncs everything again
        /// (as after a new epoch), so that nothing the server may have lost is missed.
        public static let unverifiedMark = Code("unverified-mark", 409, "Continuity mark not signed by the server")

        static let known: [Code] = [
            .eventConflict, .replicaNotOwned, .foreignOrigin, .orphanedEvent, .unverifiedMark,
            .unauthorized, .forbidden, .notFound, .invalidStoreName, .malformedBody, .invalidRequest, .invalidEvent,
            .clockSkew, .requestTimeout, .payloadTooLarge, .unsupportedMediaType, .unavailable, .insufficientStorage,
            .internalError, .transport, .protocolViolation, .local,
        ]

        /// The code with this name; an unknown name gives a new code with `status`.
        public init(name: String, status: Int) {
            if let match = Code.known.first(where: { $0.name == name }) {
                self = match
            } else {
                self.init(name, status, name)
            }
        }

        /// The problem `type` URI of the code: `urn:eventstore:sync:<name>`.
        public var problemType: String { "urn:eventstore:sync:" + name }
    }

    /// What kind of error this is.
    public let code: Code
    /// What went wrong, for people (the problem's `detail`).
    public let message: String
    /// The server's request id, when the error came from a server.
    public var requestID: String?
    /// The underlying error, if any.
    public let cause: (any Error)?
    /// The event id the error is about: the conflicting id of an ``Code/eventConflict``, the
    /// first event of the refused replica for ``Code/replicaNotOwned`` and
    /// ``Code/foreignOrigin``, the refused event of a push's ``Code/clockSkew`` (the problem's
    /// `eventId`).
    public var eventID: EventID?
    /// For a push's ``Code/clockSkew``: the latest physical time (milliseconds since 1970) a
    /// stamp could carry for the server to take it, its clock plus its skew bound (the problem's
    /// `clockBound`). A store whose own events were stamped later, while its device's clock ran
    /// ahead, stamps them anew below it once the device's clock is right
    /// (``EventStore/Store/restamp(from:notAfter:)``).
    public var clockBound: UInt64?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, requestID: String? = nil, eventID: EventID? = nil, clockBound: UInt64? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.requestID = requestID
        self.eventID = eventID
        self.clockBound = clockBound
        self.cause = cause
    }

    /// Whether trying again later may succeed: transport failures, server failures, bad
    /// answers and clock skew (clocks move on). Authorization and validation errors do not heal
    /// by themselves.
    public var isRetryable: Bool {
        switch code {
        case .transport, .unavailable, .internalError, .protocolViolation, .clockSkew, .local: true
        default: code.status >= 500 || code.status == 408 || code.status == 429
        }
    }

    /// `code: message`, the request id and the cause.
    public var description: String {
        var text = "\(code): \(message)"
        if let requestID { text += " [request \(requestID)]" }
        if let cause { text += " (\(cause))" }
        return text
    }

    /// Errors are equal when their codes and messages are.
    public static func == (lhs: SyncError, rhs: SyncError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }
}

extension SyncError.Code {
    /// Matches an error by code, so that `catch SyncError.Code.forbidden { … }` works.
    public static func ~= (code: SyncError.Code, error: any Error) -> Bool {
        (error as? SyncError)?.code == code
    }
}

extension SyncError {
    /// The sync error for a store error that names something wrong with an event — the same on a
    /// client and on a server: an invalid event or name, a stamp too far ahead, an id that names
    /// another event. `nil` for the other store errors, which each side maps by itself.
    package init?(refusedEvent error: EventStoreError) {
        switch error.code {
        case .clockSkew: self.init(.clockSkew, error.message, clockBound: error.skewedStamp?.bound, cause: error)
        case .invalidName, .invalidEvent: self.init(.invalidEvent, error.message, cause: error)
        case .eventConflict: self.init(.eventConflict, error.message, eventID: error.eventIDConflict?.id, cause: error)
        default: return nil
        }
    }
}

extension SyncError {
    /// The same error with `prefix` before its message.
    package func prefixed(_ prefix: String) -> SyncError {
        SyncError(code, prefix + message, requestID: requestID, eventID: eventID, clockBound: clockBound, cause: cause)
    }
}
