import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import NIOHTTP1
import SyncServer
import SyncTestSupport
import Testing

/// The server and `openapi.json` agree: what the document calls valid is served, what it calls
/// invalid is refused with a documented problem, and every status the server sends is listed.
/// (`Tools/contract-check.sh` runs schemathesis against the same contract.)
struct HTTPContractTests {
    /// The store operations, as method and path.
    static let storeOperations: [(HTTPMethod, String)] = [
        (.GET, "/v1/stores/notes"), (.GET, "/v1/stores/notes/events"), (.POST, "/v1/stores/notes/events"),
    ]

    /// Sends a store operation with `query`; a push carries an empty batch of `replica`.
    static func send(_ fixture: ServerFixture, _ method: HTTPMethod, _ path: String, query: String) async throws
        -> ServerFixture.Reply
    {
        let body = method == .POST ? pushBody([], replica: ReplicaID(hex: "0123456789abcdef0123456789abcdef")!) : nil
        return try await fixture.send(method, query.isEmpty ? path : "\(path)?\(query)", body: body)
    }

    /// The OpenAPI document the server serves, as a JSON value.
    static func document(_ fixture: ServerFixture) async throws -> [String: Value] {
        let reply = try await fixture.send(.GET, "/openapi.json", token: nil)
        guard case .object(let root) = try Value(json: reply.body) else {
            throw SyncError(.malformedBody, "not an object")
        }
        return root
    }

    @Test(
        "mark, epoch and digest: the three together, each in its documented form, on every operation; signature with them"
    )
    func continuityParameters() async throws {
        try await withServer { fixture in
            _ = try await HTTPValidationTests.seeded(fixture)
            let info = try RemoteInfo(json: try await fixture.send(.GET, "/v1/stores/notes").body)
            let (epoch, digest) = (info.epoch, info.digest.description)
            let signature = try #require(info.signature).description
            #expect(info.head == 3)
            let refused = [
                // Outside the documented range or form, with or without the others.
                "mark=-1", "mark=abc", "mark=%2B1", "mark=9223372036854775808", "mark=",
                "epoch=\(epoch)&mark=9223372036854775808&digest=\(digest)", "epoch=\(epoch)&mark=1.0&digest=\(digest)",
                "epoch=\(epoch)&mark=-1&digest=\(digest)", "epoch=\(epoch)&mark=x&digest=\(digest)",
                // An upper-case letter: uppercasing the whole would leave a digest of decimal digits
                // unchanged, so valid (one digest in about 1,800 is).
                "epoch=\(epoch)&mark=3&digest=A\(digest.dropFirst())", "epoch=\(epoch)&mark=3&digest=\(digest)0",
                "epoch=A\(epoch.dropFirst())&mark=3&digest=\(digest)", "epoch=e&mark=3&digest=\(digest)",
                "epoch=&mark=3&digest=\(digest)",
                // One without the others.
                "epoch=\(epoch)", "epoch=\(epoch)&mark=3", "epoch=\(epoch)&digest=\(digest)", "mark=3",
                "digest=\(digest)", "mark=3&digest=\(digest)",
                // A signature without the check it signs, or outside its form.
                "signature=\(signature)", "epoch=\(epoch)&mark=3&signature=\(signature)",
                "epoch=\(epoch)&mark=3&digest=\(digest)&signature=A\(signature.dropFirst())",
                "epoch=\(epoch)&mark=3&digest=\(digest)&signature=\(signature)0",
                "epoch=\(epoch)&mark=3&digest=\(digest)&signature=",
            ]
            for (method, path) in Self.storeOperations {
                for query in refused {
                    try await HTTPValidationTests.expectRefused(fixture, status: 400, code: "invalid-request") {
                        try await Self.send(fixture, method, path, query: query)
                    }
                }
                for query in [
                    "", "epoch=\(epoch)&mark=3&digest=\(digest)", "epoch=\(epoch)&mark=0&digest=cbf29ce484222325",
                    "epoch=\(epoch)&mark=3&digest=\(digest)&signature=\(signature)",
                ] {
                    let reply = try await Self.send(fixture, method, path, query: query)
                    #expect(reply.status == 200, "\(method) \(path)?\(query): \(reply.text)")
                }
            }
            // The largest mark is a well-formed check, but one the server did not sign: it claims
            // a rewind the server cannot verify, and is refused without a new epoch, signed with
            // another mark's signature or not at all.
            for query in [
                "epoch=\(epoch)&mark=9223372036854775807&digest=\(digest)",
                "epoch=\(epoch)&mark=9223372036854775807&digest=\(digest)&signature=\(signature)",
            ] {
                for (method, path) in Self.storeOperations {
                    try await HTTPValidationTests.expectRefused(fixture, status: 409, code: "unverified-mark") {
                        try await Self.send(fixture, method, path, query: query)
                    }
                }
            }
            let after = try RemoteInfo(json: try await fixture.send(.GET, "/v1/stores/notes").body)
            #expect(after.epoch == epoch && after.head == 3)
        }
    }

    @Test("after and limit: served across their documented range, refused outside it")
    func pageParameters() async throws {
        try await withServer { fixture in
            _ = try await HTTPValidationTests.seeded(fixture)
            for query in ["after=9223372036854775807", "limit=9223372036854775807", "after=0&limit=1"] {
                let reply = try await fixture.send(.GET, "/v1/stores/notes/events?\(query)")
                #expect(reply.status == 200, "\(query): \(reply.text)")
            }
            for query in [
                "after=9223372036854775808", "after=18446744073709551615", "limit=9223372036854775808", "limit=0",
                "after=x", "after=+5", "limit=+3", "wait=+1", "after=%205", "limit=",
            ] {
                try await HTTPValidationTests.expectRefused(fixture, status: 400, code: "invalid-request") {
                    try await fixture.send(.GET, "/v1/stores/notes/events?\(query)")
                }
            }
        }
    }

    @Test("a query parameter a path does not take is refused (400), with the ones it takes named")
    func unknownQueryParameters() async throws {
        try await withServer { fixture in
            _ = try await HTTPValidationTests.seeded(fixture)
            let cases: [(HTTPMethod, String, String)] = [
                (.GET, "/v1/stores/notes", "replica=0123456789abcdef0123456789abcdef&x=1"),
                (.GET, "/v1/stores/notes", "=&%C2%AFe=true"),
                (.GET, "/v1/stores/notes/events", "after=0&replica=0123456789abcdef0123456789abcdef"),
                (.GET, "/v1/stores/notes/events", "Limit=5"),
                (.POST, "/v1/stores/notes/events", "after=0"),
            ]
            for (method, path, query) in cases {
                try await HTTPValidationTests.expectRefused(
                    fixture, status: 400, code: "invalid-request", detail: "unknown query parameter"
                ) {
                    try await Self.send(fixture, method, path, query: query)
                }
            }
            for (method, path) in Self.storeOperations {
                let query = path.hasSuffix("events") && method == .GET ? "after=0&limit=1&wait=0" : ""
                let reply = try await Self.send(fixture, method, path, query: query)
                #expect(reply.status == 200, "\(method) \(path)?\(query): \(reply.text)")
            }
        }
    }

    @Test("a push names its replica, or takes the first event's origin; an empty push must name it")
    func pushReplica() async throws {
        try await withServer { fixture in
            let client = try await HTTPValidationTests.seeded(fixture)
            try await HTTPValidationTests.expectRefused(
                fixture, status: 400, code: "malformed-body", detail: "\"replica\""
            ) {
                try await fixture.send(.POST, "/v1/stores/notes/events", body: Array(#"{"events":[]}"#.utf8))
            }
            let empty = try await fixture.send(
                .POST, "/v1/stores/notes/events",
                body: Array(#"{"events":[],"replica":"0123456789ABCDEF0123456789abcdef"}"#.utf8))
            #expect(empty.status == 200, "\(empty.text)")
            #expect(try PushResponse(json: empty.body).replica.description == "0123456789abcdef0123456789abcdef")
            // Without `replica`, the first event's origin: the push is the client's own.
            let pending = Array(try allEvents(of: client).dropFirst(3))
            var body = String(decoding: pushBody(pending, replica: client.replicaID), as: UTF8.self)
            body = body.replacingOccurrences(of: ",\"replica\":\"\(client.replicaID)\"", with: "")
            #expect(!body.contains("\"replica\""))
            let reply = try await fixture.send(
                .POST, "/v1/stores/notes/events", token: ServerFixture.notesToken, body: Array(body.utf8))
            #expect(reply.status == 200, "\(reply.text)")
            let response = try PushResponse(json: reply.body)
            #expect(response.replica == client.replicaID && response.accepted == 3)
            // The document says the same: `replica`, or at least one event.
            let document = try await Self.document(fixture)
            let request = document["components"]?.objectValue?["schemas"]?.objectValue?["PushRequest"]?.objectValue
            #expect(request?["required"] == .array(["events"]))
            #expect(request?["anyOf"]?.arrayValue?.count == 2)
        }
    }

    @Test("a method a path does not have gets 405 with Allow, before authorization; an unknown path 404")
    func methodNotAllowed() async throws {
        try await withServer { fixture in
            _ = try await HTTPValidationTests.seeded(fixture)
            let before = try await fixture.state(of: "notes")
            let paths: [(String, String)] = [
                ("/healthz", "GET"), ("/openapi.json", "GET"), ("/metrics", "GET"), ("/v1/stores/notes", "GET"),
                ("/v1/stores/notes/events", "GET, POST"), ("/v1/stores/..%2Fetc/events", "GET, POST"),
            ]
            let methods: [HTTPMethod] = [
                .GET, .HEAD, .POST, .PUT, .DELETE, .OPTIONS, .TRACE, .PATCH, .RAW(value: "QUERY"),
            ]
            for (path, allow) in paths {
                for method in methods where !allow.contains(method.rawValue) {
                    for token in [ServerFixture.adminToken, nil] {
                        let reply = try await fixture.send(method, path, token: token)
                        #expect(reply.status == 405, "\(method) \(path): \(reply.status)")
                        #expect(reply.headers.first(name: "allow") == allow, "\(method) \(path)")
                        #expect(reply.headers.first(name: "x-request-id")?.isEmpty == false)
                        #expect(reply.headers.first(name: "content-type") == "application/problem+json")
                        if method != .HEAD { #expect(reply.problem?.code == "method-not-allowed", "\(reply.text)") }
                    }
                }
            }
            #expect(try await fixture.state(of: "notes") == before)
            for method in [HTTPMethod.GET, .DELETE] {
                let reply = try await fixture.send(method, "/v1/stores/notes/events/extra")
                #expect(reply.status == 404 && reply.problem?.code == "route-not-found", "\(reply.text)")
            }
        }
    }

    @Test("every status and problem code the server sends is in the document")
    func documentedResponses() async throws {
        try await withServer { fixture in
            let document = try await Self.document(fixture)
            let paths = document["paths"]?.objectValue ?? [:]
            func statuses(_ path: String, _ method: String) -> Set<String> {
                Set(paths[path]?.objectValue?[method]?.objectValue?["responses"]?.objectValue?.keys ?? [:].keys)
            }
            // 409 for every store operation: `unverified-mark`.
            let store: Set = ["200", "400", "401", "403", "404", "409", "500", "503", "507"]
            #expect(statuses("/v1/stores/{store}", "get") == store)
            #expect(statuses("/v1/stores/{store}/events", "get") == store)
            #expect(statuses("/v1/stores/{store}/events", "post") == store.union(["408", "413", "415", "422"]))
            #expect(statuses("/openapi.json", "get") == ["200", "500"])
            #expect(statuses("/healthz", "get") == ["200"])
            #expect(statuses("/metrics", "get") == ["200", "401", "404"])
            let codes =
                document["components"]?.objectValue?["schemas"]?.objectValue?["Problem"]?.objectValue?["properties"]?
                .objectValue?["code"]?.objectValue?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(codes.count == Set(codes).count, "codes listed twice")
            let sent: [SyncError.Code] = [
                .unauthorized, .forbidden, .notFound, .invalidStoreName, .malformedBody, .invalidRequest, .invalidEvent,
                .clockSkew, .payloadTooLarge, .requestTimeout, .unsupportedMediaType, .unavailable,
                .insufficientStorage,
                .internalError, .eventConflict, .replicaNotOwned, .orphanedEvent, .foreignOrigin, .unverifiedMark,
            ]
            #expect(Set(codes) == Set(sent.map(\.name) + ["route-not-found", "method-not-allowed"]))
            // The continuity check is one parameter of three required members and the signature.
            let continuity = document["components"]?.objectValue?["parameters"]?.objectValue?["continuity"]?.objectValue
            #expect(continuity?["explode"] == .bool(true))
            #expect(continuity?["schema"]?.objectValue?["required"] == .array(["epoch", "mark", "digest"]))
            #expect(
                Set(continuity?["schema"]?.objectValue?["properties"]?.objectValue?.keys ?? [:].keys)
                    == ["epoch", "mark", "digest", "signature"])
        }
    }
}
