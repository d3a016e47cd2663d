import EventStore
import EventStoreTestSupport
import EventSync
import NIOHTTP1
import SyncServer
import SyncTestSupport
import Testing

/// `GET /metrics`: scraped over HTTP from a real server, the counters, histograms and gauges move
/// by exactly what the requests did.
struct MetricsTests {
    static let requests = "evstore_http_requests_total"
    static let eventsRoute = "/v1/stores/{store}/events"

    /// A client holding three events of `notes`, and the push body that carries them.
    static func threeEvents(_ fixture: ServerFixture) async throws -> [UInt8] {
        let client = try fixture.client("alice")
        try await client.append([
            .put("notes", id: "a", fields: ["title": "alpha"]), .put("notes", id: "b", fields: ["title": "beta"]),
            .patch("notes", id: "a", fields: ["done": true]),
        ])
        return pushBody(try allEvents(of: client), replica: client.replicaID)
    }

    // MARK: Counters, histograms, gauges

    @Test("pushes, pulls and infos move the request counter, the histograms and the event counters exactly")
    func pushesAndPulls() async throws {
        try await withServer { fixture in
            let push = try await Self.threeEvents(fixture)
            let before = try await fixture.scrape()
            #expect(try await fixture.send(.POST, "/v1/stores/notes/events", body: push).status == 200)
            #expect(try await fixture.send(.POST, "/v1/stores/notes/events", body: push).status == 200)  // duplicates
            for after in [0, 2, 3] {
                #expect(try await fixture.send(.GET, "/v1/stores/notes/events?after=\(after)&limit=2").status == 200)
            }
            #expect(try await fixture.send(.GET, "/v1/stores/notes").status == 200)
            #expect(try await fixture.send(.GET, "/v1/stores/notes/events", token: nil).status == 401)
            #expect(try await fixture.send(.GET, "/nowhere/notes").status == 404)
            let after = try await fixture.scrape()

            func requests(_ route: String, _ method: String, _ status: Int) -> Double {
                after.delta(Self.requests, ["route": route, "method": method, "status": "\(status)"], since: before)
            }
            #expect(requests(Self.eventsRoute, "POST", 200) == 2)
            #expect(requests(Self.eventsRoute, "GET", 200) == 3)
            #expect(requests(Self.eventsRoute, "GET", 401) == 1)
            #expect(requests("/v1/stores/{store}", "GET", 200) == 1)
            #expect(requests("unmatched", "GET", 404) == 1)
            // Route templates only: no store name, no raw path.
            #expect(
                after.labelValues("route", of: Self.requests).isSubset(
                    of: ["/metrics", "/v1/stores/{store}", Self.eventsRoute, "unmatched"]),
                "\(after.labelValues("route", of: Self.requests))")

            #expect(after.delta("evstore_events_pushed_total", ["result": "accepted"], since: before) == 3)
            #expect(after.delta("evstore_events_pushed_total", ["result": "duplicate"], since: before) == 3)
            #expect(after.delta("evstore_events_pulled_total", since: before) == 3)
            #expect(after.value("evstore_store_head", ["store": "notes"]) == 3)

            #expect(after.delta("evstore_push_duration_seconds_count", since: before) == 2)
            #expect(after.delta("evstore_push_duration_seconds_bucket", ["le": "+Inf"], since: before) == 2)
            #expect(after.delta("evstore_push_duration_seconds_sum", since: before) > 0)
            let quick = ["live": "false"]
            #expect(after.delta("evstore_pull_duration_seconds_count", quick, since: before) == 3)
            #expect(
                after.delta("evstore_pull_duration_seconds_bucket", quick.merging(["le": "+Inf"]) { $1 }, since: before)
                    == 3)
            #expect(after.delta("evstore_pull_duration_seconds_count", ["live": "true"], since: before) == 0)
            #expect(after.value("evstore_open_long_polls") == 0)

            // The scrape counts itself once it is answered.
            let third = try await fixture.scrape()
            #expect(
                third.delta(Self.requests, ["route": "/metrics", "method": "GET", "status": "200"], since: after) == 1)
        }
    }

    @Test("the latency buckets run from 1 ms to 30 s, in seconds")
    func buckets() async throws {
        try await withServer { fixture in
            let scrape = try await fixture.scrape()
            for name in ["evstore_push_duration_seconds_bucket", "evstore_pull_duration_seconds_bucket"] {
                let bounds = scrape.labelValues("le", of: name)
                #expect(
                    bounds.contains("0.001") && bounds.contains("30.0") && bounds.contains("+Inf"), "\(name): \(bounds)"
                )
                #expect(bounds.count == 16, "\(name): \(bounds)")
            }
        }
    }

    @Test("a server knows the heads of the stores it has answered for since it started, one series each")
    func storeHeads() async throws {
        try await withServer { fixture in
            let push = try await Self.threeEvents(fixture)
            #expect(try await fixture.send(.POST, "/v1/stores/notes/events", body: push).status == 200)
            #expect(try await fixture.send(.POST, "/v1/stores/tasks/events", body: push).status == 200)
            // A restarted server has served nothing yet: an info, then a pull, tell it the heads.
            try await fixture.stop()
            try await fixture.start()
            #expect(try await fixture.scrape().labelValues("store", of: "evstore_store_head").isEmpty)
            #expect(try await fixture.send(.GET, "/v1/stores/notes").status == 200)
            #expect(try await fixture.scrape().value("evstore_store_head", ["store": "notes"]) == 3)
            #expect(try await fixture.send(.GET, "/v1/stores/tasks/events?after=3").status == 200)
            let scrape = try await fixture.scrape()
            #expect(scrape.labelValues("store", of: "evstore_store_head") == ["notes", "tasks"])
            #expect(scrape.value("evstore_store_head", ["store": "tasks"]) == 3)
            #expect(scrape.value("evstore_events_pulled_total") == 0)  // the pull was after the head
        }
    }

    // MARK: Long polls

    @Test("a pull with wait=5 is an open long-poll while it waits, and no longer once answered")
    func openLongPolls() async throws {
        try await withServer { fixture in
            #expect(
                try await fixture.send(.POST, "/v1/stores/notes/events", body: try await Self.threeEvents(fixture))
                    .status == 200)
            let before = try await fixture.scrape()
            #expect(before.value("evstore_open_long_polls") == 0)
            let waiting = Task { try await fixture.send(.GET, "/v1/stores/notes/events?after=3&wait=5") }
            #expect(
                try await eventually(timeout: 30) { try await fixture.scrape().value("evstore_open_long_polls") == 1 })
            let reply = try await waiting.value
            #expect(reply.status == 200 && (try? PullPage(json: reply.body))?.events.isEmpty == true, "\(reply.text)")
            let after = try await fixture.scrape()
            #expect(after.value("evstore_open_long_polls") == 0)
            let live = ["live": "true"]
            #expect(after.delta("evstore_pull_duration_seconds_count", live, since: before) == 1)
            #expect(
                after.delta("evstore_pull_duration_seconds_bucket", live.merging(["le": "2.5"]) { $1 }, since: before)
                    == 0)
            #expect(after.delta("evstore_pull_duration_seconds_sum", live, since: before) >= 4.9)
            #expect(after.delta("evstore_events_pulled_total", since: before) == 0)
        }
    }

    // MARK: Access

    @Test("with metrics off the server has no /metrics")
    func metricsOff() async throws {
        try await withServer(configure: { $0.metricsEnabled = false }) { fixture in
            for method in [HTTPMethod.GET, .POST] {
                let reply = try await fixture.send(method, "/metrics", token: nil)
                #expect(reply.status == 404 && reply.problem?.code == "route-not-found", "\(method): \(reply.text)")
            }
            #expect(try await fixture.send(.GET, "/healthz", token: nil).status == 200)
        }
    }

    @Test("with a metrics token only its bearer gets the metrics, and the token grants no store")
    func metricsToken() async throws {
        try await withServer(configure: { $0.metricsToken = "scrape-s3cret" }) { fixture in
            for token in [nil, ServerFixture.adminToken, "scrape-s3creT", "scrape-s3cret-"] {
                let reply = try await fixture.send(.GET, "/metrics", token: token)
                #expect(
                    reply.status == 401 && reply.problem?.code == "unauthorized", "\(token ?? "none"): \(reply.text)")
                #expect(reply.headers.first(name: "www-authenticate")?.hasPrefix("Bearer") == true)
            }
            let reply = try await fixture.send(.GET, "/metrics", token: "scrape-s3cret")
            #expect(reply.status == 200)
            #expect(reply.headers.first(name: "content-type") == "text/plain; version=0.0.4; charset=utf-8")
            #expect(try MetricsScrape(text: reply.text).value("evstore_open_long_polls") == 0)
            #expect(try await fixture.send(.GET, "/v1/stores/notes", token: "scrape-s3cret").status == 401)
        }
    }
}
