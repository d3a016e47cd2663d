import EventStore

// The wire form of the protocol messages (see `openapi.json` in the server module). Keys are
// written in byte order; integers are JSON numbers, 64-bit stamps and digests are strings.

extension RemoteInfo {
    /// The JSON body of `GET /v1/stores/{store}`.
    public func jsonBytes() -> [UInt8] {
        var out = JSONOut()
        out.raw("{\"digest\":")
        out.string(digest.description)
        out.raw(",\"epoch\":")
        out.string(epoch)
        out.raw(",\"head\":")
        out.number(head)
        out.raw(",\"limits\":{\"defaultPageEvents\":")
        out.number(limits.defaultPageEvents)
        out.raw(",\"maxPageBytes\":")
        out.number(limits.maxPageBytes)
        out.raw(",\"maxPageEvents\":")
        out.number(limits.maxPageEvents)
        out.raw(",\"maxPushEvents\":")
        out.number(limits.maxPushEvents)
        out.raw(",\"maxRequestBytes\":")
        out.number(limits.maxRequestBytes)
        out.raw("}")
        if let replicaHighWater {
            out.raw(",\"replicaHighWater\":")
            out.number(replicaHighWater)
        }
        if let signature {
            out.raw(",\"signature\":")
            out.string(signature.description)
        }
        out.raw(",\"store\":")
        out.string(store)
        out.raw("}")
        return out.bytes
    }

    /// Decodes the JSON body of `GET /v1/stores/{store}`.
    ///
    /// - Throws: ``SyncError`` with code ``SyncError/Code/malformedBody``.
    public init(json: [UInt8]) throws {
        let object = try JSONObject(parsing: json, context: "store info")
        let limitsObject = try object.object("limits")
        var limits = SyncLimits()
        limits.defaultPageEvents = try limitsObject.int("defaultPageEvents")
        limits.maxPageBytes = try limitsObject.int("maxPageBytes")
        limits.maxPageEvents = try limitsObject.int("maxPageEvents")
        limits.maxPushEvents = try limitsObject.int("maxPushEvents")
        limits.maxRequestBytes = try limitsObject.int("maxRequestBytes")
        self.init(
            store: try object.string("store"), head: try object.uint64("head"), epoch: try object.string("epoch"),
            digest: try object.digest("digest"), limits: limits,
            replicaHighWater: object.members["replicaHighWater"] == nil ? nil : try object.uint64("replicaHighWater"),
            signature: try object.signature("signature"))
    }
}

extension PushRequest {
    /// The keys of a push body.
    static let keys: Set<String> = ["clock", "events", "relay", "replica", "through"]

    /// The JSON body of `POST /v1/stores/{store}/events`.
    public func jsonBytes() -> [UInt8] {
        var out = JSONOut()
        out.bytes.reserveCapacity(events.count * 200 + 64)
        out.raw("{")
        if let clock {
            // A 64-bit stamp, as a decimal string (as events' `hlc`): JSON numbers lose precision.
            out.raw("\"clock\":")
            out.string(String(clock.rawValue))
            out.raw(",")
        }
        out.raw("\"events\":[")
        for (index, event) in events.enumerated() {
            if index > 0 { out.raw(",") }
            event.writeJSON(into: &out.bytes)
        }
        out.raw("]")
        if relay { out.raw(",\"relay\":true") }
        out.raw(",\"replica\":")
        out.string(replica.description)
        if let through {
            out.raw(",\"through\":")
            out.number(through)
        }
        out.raw("}")
        return out.bytes
    }

    /// Decodes a push body, strictly: field values may nest at most
    /// ``EventStore/JSONSyntaxError/defaultMaxDepth`` levels, and an unknown key (in the body or
    /// in an event) or an integer beyond 64 bits is refused, never dropped or rounded.
    ///
    /// - Throws: ``SyncError`` with code ``SyncError/Code/malformedBody`` naming the problem
    ///   (`events[3]: "op" is missing`, `push body: unknown key "evnets"`).
    public init(json: [UInt8]) throws {
        let object = try JSONObject(parsing: json, context: "push body")
        if let unknown = object.members.keys.filter({ !PushRequest.keys.contains($0) }).min() {
            throw SyncError(
                .malformedBody,
                "push body: unknown key \(unknown.debugDescription) (a push body has clock, events, relay, replica, through)"
            )
        }
        guard case .array(let values)? = object.members["events"] else {
            throw SyncError(.malformedBody, "push body: \"events\" must be an array of events")
        }
        var events: [Event] = []
        events.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            do {
                events.append(try Event(jsonValue: value))
            } catch let error as EventStoreError {
                throw SyncError(.malformedBody, "events[\(index)]: \(error.message)")
            }
        }
        let replica: ReplicaID
        if let hex = object.members["replica"] {
            guard case .string(let text) = hex, let parsed = ReplicaID(hex: text.lowercased()) else {
                throw SyncError(.malformedBody, "push body: \"replica\" must be 32 hex digits")
            }
            replica = parsed
        } else if let first = events.first {
            replica = first.id.origin
        } else {
            throw SyncError(.malformedBody, "push body: \"replica\" is missing")
        }
        var relay = false
        switch object.members["relay"] {
        case nil: break
        case .bool(let flag)?: relay = flag
        default: throw SyncError(.malformedBody, "push body: \"relay\" must be true or false")
        }
        var through: UInt64?
        if let value = object.members["through"] {
            guard case .int(let number) = value, number >= 0 else {
                throw SyncError(.malformedBody, "push body: \"through\" must be a non-negative integer")
            }
            through = UInt64(number)
        }
        var clock: HLCTimestamp?
        if let value = object.members["clock"] {
            guard case .string(let text) = value, !text.isEmpty,
                text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let raw = UInt64(text)
            else {
                throw SyncError(.malformedBody, "push body: \"clock\" must be a stamp in decimal digits (a string)")
            }
            clock = HLCTimestamp(rawValue: raw)
        }
        self.init(replica: replica, events: events, relay: relay, through: through, clock: clock)
    }
}

extension PushResponse {
    /// The JSON body of a push response.
    public func jsonBytes() -> [UInt8] {
        var out = JSONOut()
        out.raw("{\"accepted\":")
        out.number(accepted)
        out.raw(",\"digest\":")
        out.string(digest.description)
        out.raw(",\"duplicates\":")
        out.number(duplicates)
        out.raw(",\"epoch\":")
        out.string(epoch)
        out.raw(",\"head\":")
        out.number(head)
        out.raw(",\"highWater\":")
        out.number(highWater)
        out.raw(",\"replica\":")
        out.string(replica.description)
        if let signature {
            out.raw(",\"signature\":")
            out.string(signature.description)
        }
        out.raw("}")
        return out.bytes
    }

    /// Decodes a push response.
    ///
    /// - Throws: ``SyncError`` with code ``SyncError/Code/malformedBody``.
    public init(json: [UInt8]) throws {
        let object = try JSONObject(parsing: json, context: "push response")
        guard let replica = ReplicaID(hex: try object.string("replica")) else {
            throw SyncError(.malformedBody, "push response: \"replica\" must be 32 hex digits")
        }
        self.init(
            accepted: try object.int("accepted"), duplicates: try object.int("duplicates"),
            head: try object.uint64("head"), digest: try object.digest("digest"), epoch: try object.string("epoch"),
            replica: replica, highWater: try object.uint64("highWater"), signature: try object.signature("signature"))
    }
}

extension PullPage {
    /// The JSON body of a page.
    public func jsonBytes() -> [UInt8] {
        var events: [UInt8] = []
        for (index, event) in self.events.enumerated() {
            if index > 0 { events.append(UInt8(ascii: ",")) }
            event.writeJSON(into: &events)
        }
        return PullPage.jsonBytes(
            eventsJSON: events, next: next, head: head, epoch: epoch, digest: digest, checksum: checksum,
            signature: signature)
    }

    /// The JSON body of a page whose events are already encoded (comma-separated).
    package static func jsonBytes(
        eventsJSON: [UInt8], next: UInt64, head: UInt64, epoch: String, digest: LogDigest, checksum: PageChecksum,
        signature: MarkSignature?
    ) -> [UInt8] {
        var out = JSONOut()
        out.bytes.reserveCapacity(eventsJSON.count + 200)
        out.raw("{\"checksum\":")
        out.string(checksum.description)
        out.raw(",\"digest\":")
        out.string(digest.description)
        out.raw(",\"epoch\":")
        out.string(epoch)
        out.raw(",\"events\":[")
        out.bytes.append(contentsOf: eventsJSON)
        out.raw("],\"head\":")
        out.number(head)
        out.raw(",\"next\":")
        out.number(next)
        if let signature {
            out.raw(",\"signature\":")
            out.string(signature.description)
        }
        out.raw("}")
        return out.bytes
    }

    /// Decodes a page. The checksum is *not* verified here (see ``PageChecksum``).
    ///
    /// A page in exactly the form ``jsonBytes()`` writes (as every server does) is read without
    /// building a JSON tree, and its events' checksum is taken over their bytes as received
    /// (``receivedChecksum``) instead of encoding them again; any other form is read by the
    /// general JSON parser.
    ///
    /// - Throws: ``SyncError`` with code ``SyncError/Code/malformedBody``.
    public init(json: [UInt8]) throws {
        if let page = json.withUnsafeBufferPointer(PullPage.init(canonical:)) {
            self = page
        } else {
            try self.init(parsing: json)
        }
    }

    /// Decodes a page in any form with the general JSON parser.
    init(parsing json: [UInt8]) throws {
        let object = try JSONObject(parsing: json, context: "page")
        guard case .array(let values)? = object.members["events"] else {
            throw SyncError(.malformedBody, "page: \"events\" must be an array")
        }
        var events: [Event] = []
        events.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            do {
                events.append(try Event(jsonValue: value))
            } catch let error as EventStoreError {
                throw SyncError(.malformedBody, "page events[\(index)]: \(error.message)")
            }
        }
        guard let checksum = PageChecksum(hex: try object.string("checksum")) else {
            throw SyncError(.malformedBody, "page: \"checksum\" must be 16 hex digits")
        }
        self.init(
            events: events, next: try object.uint64("next"), head: try object.uint64("head"),
            epoch: try object.string("epoch"), digest: try object.digest("digest"), checksum: checksum,
            signature: try object.signature("signature"))
    }

    /// A page in exactly the form ``jsonBytes()`` writes, or `nil` where the bytes differ from it
    /// (see ``CanonicalJSONReader``), with the checksum of its events' bytes.
    private init?(canonical json: UnsafeBufferPointer<UInt8>) {
        var reader = CanonicalJSONReader(json, maxDepth: JSONObject.bodyDepth)
        guard reader.skip(#"{"checksum":"#), let checksumHex = reader.string(),
            let checksum = PageChecksum(hex: checksumHex), reader.skip(#","digest":"#), let digestHex = reader.string(),
            let digest = LogDigest(hex: digestHex), reader.skip(#","epoch":"#), let epoch = reader.string(),
            reader.skip(#","events":["#)
        else { return nil }
        var events: [Event] = []
        var hash = FNV1a()
        if !reader.skip("]") {
            repeat {
                let start = reader.offset
                // The page object is level 1, its events array 2, each event 3.
                guard let event = reader.event(depth: 3) else { return nil }
                hash.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: json[start..<reader.offset])))
                hash.combine(byte: 0x0A)
                events.append(event)
            } while reader.skip(",")
            guard reader.skip("]") else { return nil }
        }
        guard reader.skip(#","head":"#), let head = reader.integer(), reader.skip(#","next":"#),
            let next = reader.integer()
        else { return nil }
        var signature: MarkSignature?
        if reader.skip(#","signature":"#) {
            guard let hex = reader.string(), let parsed = MarkSignature(hex: hex) else { return nil }
            signature = parsed
        }
        guard reader.skip("}"), reader.isAtEnd else { return nil }
        self.init(
            events: events, next: next, head: head, epoch: epoch, digest: digest, checksum: checksum,
            signature: signature)
        receivedChecksum = PageChecksum(rawValue: hash.state)
    }
}
