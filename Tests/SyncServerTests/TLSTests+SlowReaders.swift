import AsyncHTTPClient
import EventStore
import EventSync
import Foundation
import NIOCore
import NIOHTTP1
import SyncServer
import SyncTestSupport
import Testing

/// The write timeout over TLS: a client that stops reading a page has its connection closed.
extension TLSTests {
    @Test("over TLS, a client that stops reading a page is cut after the write timeout")
    func aStalledReaderOverTLSIsCut() async throws {
        var limits = SyncLimits()
        limits.maxPageBytes = 16 << 20
        let timeout = Duration.seconds(2)
        try await withServer(
            limits: limits,
            configure: {
                $0.tls = TLSTests.tls; $0.writeTimeout = timeout
            }
        ) {
            fixture in
            try await Self.withTrustingClient { client in
                let store = try fixture.client("alice")
                // 60 events of 200 KB: a page of 12 MB, more than socket buffers and the client's
                // read-ahead hold.
                let text = String(repeating: "x", count: 200_000)
                for round in 0..<12 {
                    var events: [Event] = []
                    for index in 0..<5 {
                        events.append(
                            try await store.put("files", id: "f\(round)-\(index)", fields: ["body": .string(text)]))
                    }
                    let reply = try await RunningServer.send(
                        to: fixture.baseURL, .POST, "/v1/stores/files/events", token: ServerFixture.adminToken,
                        body: pushBody(events, replica: store.replicaID), timeout: .seconds(120), client: client)
                    #expect(reply.status == 200, "\(reply.text.prefix(300))")
                }
                var request = HTTPClientRequest(url: fixture.baseURL + "/v1/stores/files/events?after=0&limit=1000")
                request.headers.add(name: "Authorization", value: "Bearer \(ServerFixture.adminToken)")

                // Reads nothing for twice the timeout, then what it can: the page was cut.
                let stalled = try await client.execute(request, timeout: .seconds(120))
                #expect(stalled.status == .ok)
                try await Task.sleep(for: timeout * 2)
                var bytes = 0
                do {
                    for try await piece in stalled.body { bytes += piece.readableBytes }
                } catch {
                    // The connection ended early: what was read counts.
                }
                #expect(bytes < 12_000_000, "\(bytes) bytes of a stalled read")
            }
        }
    }
}
