import EventStore

/// A problem details body (RFC 9457) as the server writes it.
struct ProblemDetails: Sendable {
    var code: SyncError.Code
    var detail: String
    var requestID: String?
    var eventID: EventID?
    var clockBound: UInt64?

    func jsonBytes() -> [UInt8] {
        var out = JSONOut()
        if let clockBound {
            out.raw("{\"clockBound\":")
            out.number(clockBound)
            out.raw(",\"code\":")
        } else {
            out.raw("{\"code\":")
        }
        out.string(code.name)
        out.raw(",\"detail\":")
        out.string(detail)
        if let eventID {
            out.raw(",\"eventId\":")
            out.string(eventID.description)
        }
        if let requestID {
            out.raw(",\"requestId\":")
            out.string(requestID)
        }
        out.raw(",\"status\":")
        out.number(code.status)
        out.raw(",\"title\":")
        out.string(code.title)
        out.raw(",\"type\":")
        out.string(code.problemType)
        out.raw("}")
        return out.bytes
    }

    /// Reads a problem body; `nil` when the body is not one.
    init?(json: [UInt8], status: Int) {
        guard let value = try? Value(json: json), case .object(let members) = value else { return nil }
        let name: String
        if case .string(let code)? = members["code"] {
            name = code
        } else if case .string(let type)? = members["type"], let last = type.split(separator: ":").last {
            name = String(last)
        } else {
            return nil
        }
        code = SyncError.Code(name: name, status: status)
        detail = members["detail"]?.stringValue ?? members["title"]?.stringValue ?? "HTTP \(status)"
        requestID = members["requestId"]?.stringValue
        eventID = members["eventId"]?.stringValue.flatMap(EventID.init(_:))
        if case .int(let bound)? = members["clockBound"], bound >= 0 { clockBound = UInt64(bound) }
    }

    init(code: SyncError.Code, detail: String, requestID: String?, eventID: EventID?, clockBound: UInt64?) {
        self.code = code
        self.detail = detail
        self.requestID = requestID
        self.eventID = eventID
        self.clockBound = clockBound
    }
}

extension SyncError {
    /// The problem details body (`application/problem+json`) for this error.
    public func problemJSON(requestID: String? = nil) -> [UInt8] {
        ProblemDetails(
            code: code, detail: message, requestID: requestID ?? self.requestID, eventID: eventID,
            clockBound: clockBound
        ).jsonBytes()
    }

    /// The error a problem details body describes (`nil` when the body is not one).
    public init?(problemJSON json: [UInt8], status: Int) {
        guard let problem = ProblemDetails(json: json, status: status) else { return nil }
        self.init(
            problem.code, problem.detail, requestID: problem.requestID, eventID: problem.eventID,
            clockBound: problem.clockBound)
    }
}
