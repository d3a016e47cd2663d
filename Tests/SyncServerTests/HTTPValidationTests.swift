import AsyncHTTPClient
import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import NIOHTTP1
import SyncServer
import SyncTestSupport
import Testing

/// Bad requests over real HTTP get a clear problem response, and change nothing in the log.
struct HTTPValidationTests {
    /// Seeds the `notes` store with 3 events; returns a client with 3 more unpushed events.
    static func seeded(_ fixture: ServerFixture) async throws -> Store {
        let client = try fixture.client("seed")
        try await client.append([
            .put("notes", id: "a", fields: ["title": "alpha"]), .put("notes", id: "b", fields: ["title": "beta"]),
            .delete("notes", id: "a"),
        ])
        try await fixture.synchronizer(client).sync()
        try await client.append([
            .put("notes", id: "c", fields: ["title": "gamma"]), .patch("notes", id: "b", fields: ["done": true]),
            .put("notes", id: "d", fields: [:]),
        ])
        return client
    }

    /// Sends `request` and expects a problem with `status` and `code` and an unchanged log.
    static func expectRefused(
        _ fixture: ServerFixture, status: Int, code: String, detail: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ request: () async throws -> ServerFixture.Reply
    ) async throws {
        let before = try await fixture.state(of: "notes")
        let reply = try await request()
        #expect(reply.status == status, "\(reply.text)", sourceLocation: sourceLocation)
        #expect(reply.headers.first(name: "content-type") == "application/problem+json", sourceLocation: sourceLocation)
        #expect(reply.headers.first(name: "x-request-id")?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(reply.problem?.code == code, "\(reply.text)", sourceLocation: sourceLocation)
        if let detail {
            #expect(reply.problem?.detail.contains(detail) == true, "\(reply.text)", sourceLocation: sourceLocation)
        }
        #expect(try await fixture.state(of: "notes") == before, "the log changed", sourceLocation: sourceLocation)
    }

    @Test func authorization() async throws {
        try await withServer { fixture in
            _ = try await Self.seeded(fixture)
            try await Self.expectRefused(fixture, status: 401, code: "unauthorized", detail: "missing") {
                try await fixture.send(.GET, "/v1/stores/notes", token: nil)
            }
            try await Self.expectRefused(fixture, status: 401, code: "unauthorized", detail: "unknown token") {
                try await fixture.send(.GET, "/v1/stores/notes/events", token: "nope")
            }
            try await Self.expectRefused(fixture, status: 401, code: "unauthorized") {
                try await fixture.send(.GET, "/v1/stores/notes", token: nil, headers: [("Authorization", "Basic eDp5")])
            }
            let unauthorized = try await fixture.send(.GET, "/v1/stores/notes", token: nil)
            #expect(unauthorized.headers.first(name: "www-authenticate")?.hasPrefix("Bearer") == true)
            try await Self.expectRefused(fixture, status: 403, code: "forbidden", detail: "\"tasks\"") {
                try await fixture.send(
                    .POST, "/v1/stores/tasks/events", token: ServerFixture.notesToken,
                    body: Array(#"{"events":[]}"#.utf8))
            }
            #expect(try await fixture.state(of: "tasks") == nil)
            #expect(try await fixture.send(.GET, "/v1/stores/notes", token: ServerFixture.notesToken).status == 200)
            #expect(try await fixture.send(.GET, "/v1/stores/missing").status == 404)
            #expect(try await fixture.send(.GET, "/v1/stores/missing").problem?.code == "store-not-found")
            try await Self.expectRefused(fixture, status: 400, code: "invalid-store-name") {
                try await fixture.send(.GET, "/v1/stores/..%2Fetc")
            }
        }
    }

    @Test func malformedBodies() async throws {
        try await withServer { fixture in
            let client = try await Self.seeded(fixture)
            let valid = try allEvents(of: client).dropFirst(3)
            let validJSON = String(decoding: pushBody(Array(valid), replica: client.replicaID), as: UTF8.self)
            for (body, detail) in [
                ("{\"events\": [", "not valid JSON"),
                ("[]", "must be a JSON object"),
                ("{\"events\": 3}", "\"events\" must be an array"),
                ("{\"events\": [{\"op\": \"put\"}]}", "events[0]"),
                (validJSON.replacingOccurrences(of: "\"op\":\"patch\"", with: "\"op\":\"merge\""), "events[1]"),
                (validJSON.replacingOccurrences(of: "\"hlc\":\"", with: "\"hlc\":\"x"), "\"hlc\""),
                (String(validJSON.dropLast()), "not valid JSON"),
            ] {
                try await Self.expectRefused(fixture, status: 400, code: "malformed-body", detail: detail) {
                    try await fixture.send(.POST, "/v1/stores/notes/events", body: Array(body.utf8))
                }
            }
            // Nesting deeper than 32 levels in a field value.
            var deep: Value = 1
            for _ in 0..<40 { deep = .array([deep]) }
            var event = valid.first!
            event.fields = ["deep": deep]
            try await Self.expectRefused(fixture, status: 400, code: "malformed-body", detail: "nested deeper") {
                try await fixture.send(
                    .POST, "/v1/stores/notes/events", body: pushBody([event], replica: client.replicaID))
            }
            try await Self.expectRefused(fixture, status: 400, code: "invalid-request") {
                try await fixture.send(.GET, "/v1/stores/notes/events?after=-1")
            }
            try await Self.expectRefused(fixture, status: 400, code: "invalid-request") {
                try await fixture.send(.GET, "/v1/stores/notes?epoch=e&mark=1&digest=zz")
            }
        }
    }

    @Test func oversizedRequests() async throws {
        var limits = SyncLimits()
        limits.maxRequestBytes = 64 << 10
        limits.maxPushEvents = 50
        try await withServer(limits: limits) { fixture in
            let client = try await Self.seeded(fixture)
            let big = Array(repeating: UInt8(ascii: " "), count: 100 << 10) + Array(#"{"events":[]}"#.utf8)
            try await Self.expectRefused(fixture, status: 413, code: "payload-too-large", detail: "bytes") {
                try await fixture.send(.POST, "/v1/stores/notes/events", body: big)
            }
            var many: [Event] = []
            let template = try allEvents(of: client)[3]
            for sequence in 1...51 {
                var event = template
                event.id = EventID(
                    origin: ReplicaID(hex: "00000000000000000000000000000001")!, sequence: UInt64(sequence))
                many.append(event)
            }
            try await Self.expectRefused(fixture, status: 413, code: "payload-too-large", detail: "51 events") {
                try await fixture.send(
                    .POST, "/v1/stores/notes/events", body: pushBody(many, replica: many[0].id.origin))
            }
            let accepted = try await fixture.send(
                .POST, "/v1/stores/notes/events", body: pushBody(Array(many.prefix(50)), replica: many[0].id.origin))
            #expect(accepted.status == 200)
            #expect(try PushResponse(json: accepted.body).accepted == 50)
        }
    }

    @Test func invalidEventsAndFarFutureStamps() async throws {
        try await withServer { fixture in
            let client = try await Self.seeded(fixture)
            let pending = Array(try allEvents(of: client).dropFirst(3))
            var badName = pending
            badName[1].collection = "no spaces allowed"
            try await Self.expectRefused(fixture, status: 422, code: "invalid-event", detail: "events[1]") {
                try await fixture.send(
                    .POST, "/v1/stores/notes/events", token: ServerFixture.notesToken,
                    body: pushBody(badName, replica: client.replicaID))
            }
            var badPatch = pending
            badPatch[1].fields = [:]
            try await Self.expectRefused(fixture, status: 422, code: "invalid-event", detail: "patch") {
                try await fixture.send(
                    .POST, "/v1/stores/notes/events", token: ServerFixture.notesToken,
                    body: pushBody(badPatch, replica: client.replicaID))
            }
            var future = pending
            future[2].hlc = HLCTimestamp(physical: fixture.clock.now + 61_000, logical: 0)
            try await Self.expectRefused(fixture, status: 422, code: "clock-skew", detail: "events[2]") {
                try await fixture.send(
                    .POST, "/v1/stores/notes/events", token: ServerFixture.notesToken,
                    body: pushBody(future, replica: client.replicaID))
            }
            // Within the bound is fine.
            var near = pending
            near[2].hlc = HLCTimestamp(physical: fixture.clock.now + 59_000, logical: 0)
            let reply = try await fixture.send(
                .POST, "/v1/stores/notes/events", token: ServerFixture.notesToken,
                body: pushBody(near, replica: client.replicaID))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(try PushResponse(json: reply.body).accepted == 3)
        }
    }

    @Test func aFarFutureClientIsRefusedThroughTheSynchronizer() async throws {
        try await withServer { fixture in
            let client = try fixture.client("future", skew: 3_600_000)
            try await client.put("notes", id: "x", fields: ["title": "from the future"])
            do {
                try await fixture.synchronizer(client).sync()
                Issue.record("a stamp an hour ahead was accepted")
            } catch let error as SyncError {
                #expect(error.code == .clockSkew)
                #expect(error.requestID != nil)
                #expect(error.message.contains("ahead"))
            }
            // The refused push created no store.
            let info = try await fixture.send(.GET, "/v1/stores/notes")
            #expect(info.status == 404 && info.problem?.code == "store-not-found", "\(info.text)")
        }
    }

    @Test func unknownRoutesAndServiceEndpoints() async throws {
        try await withServer { fixture in
            let missing = try await fixture.send(.GET, "/v2/nothing")
            #expect(missing.status == 404)
            #expect(missing.problem?.code == "route-not-found")
            let health = try await fixture.send(.GET, "/healthz", token: nil)
            #expect(health.status == 200 && health.text == #"{"status":"ok"}"#)
            let given = try await fixture.send(.GET, "/healthz", token: nil, headers: [("x-request-id", "abc-123")])
            #expect(given.headers.first(name: "x-request-id") == "abc-123")
            let document = try await fixture.send(.GET, "/openapi.json", token: nil)
            #expect(document.status == 200)
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Sources/SyncServer/openapi.json")
            #expect(document.body == [UInt8](try Data(contentsOf: source)))
            guard case .object(let root)? = try? Value(json: document.body), case .object(let paths)? = root["paths"]
            else {
                Issue.record("the OpenAPI document is not an object with paths")
                return
            }
            #expect(root["openapi"]?.stringValue?.hasPrefix("3.") == true)
            #expect(
                Set(paths.keys) == [
                    "/healthz", "/openapi.json", "/metrics", "/v1/stores/{store}", "/v1/stores/{store}/events",
                ])
            // A full disk is part of the contract of a push.
            let push = paths["/v1/stores/{store}/events"]?.objectValue?["post"]?.objectValue
            #expect(push?["responses"]?.objectValue?["507"] != nil, "push documents 507")
            #expect(document.text.contains("\"insufficient-storage\""), "the problem codes list insufficient-storage")
        }
    }
}
