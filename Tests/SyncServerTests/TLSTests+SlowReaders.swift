import AsyncHTTPClient
import EventStore
import EventSync
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SyncServer
import SyncTestSupport
import Testing

/// The write timeout over TLS: a client that stops reading a page is cut; one that keeps
/// reading gets it whole, because the page's pieces stay separate TLS writes, each of which is
/// progress (merged into one write, a steady reader would see no progress until the whole page
/// had left).
extension TLSTests {
    @Test("over TLS, a client that stops reading a page is cut after the write timeout; a slow reader gets it whole")
    func slowReadersOverTLS() async throws {
        var limits = SyncLimits()
        limits.maxPageBytes = 16 << 20
        let timeout = Duration.seconds(5)
        try await withServer(
            limits: limits,
            configure: {
                $0.tls = TLSTests.tls; $0.writeTimeout = timeout
            }
        ) {
            fixture in
            // The client takes bytes from the socket on an event loop of its own: on the loops
            // the server shares with the whole parallel suite, it would stop whenever those are
            // busy.
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { Task { try? await group.shutdownGracefully() } }
            try await Self.withTrustingClient(eventLoopGroup: group) { client in
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
                let (stalledBytes, _) = await Self.read(stalled.body, nanosecondsPerByte: 0)
                #expect(stalledBytes < 12_000_000, "\(stalledBytes) bytes of a stalled read")

                // Reads at about 1 MB/s (a pause after each piece for its size): 12 s for the page,
                // more than twice the timeout, in pieces of a small part of it. The reading task
                // runs on a queue of its own: on the cooperative pool, which the parallel suite
                // keeps busy, its pauses overran by seconds and the server rightly cut a reader
                // that had stopped reading. A round in which the reader still went half the
                // timeout or more between two pieces (two cores shared with the whole suite)
                // proves nothing either way, and is read again.
                let reader = QueueTaskExecutor(label: "tls-slow-reader")
                var outcome: (bytes: Int, longestGap: Duration) = (0, .zero)
                for _ in 0..<3 {
                    let slow = try await client.execute(request, timeout: .seconds(120))
                    let started = ContinuousClock.now
                    outcome = await withTaskExecutorPreference(reader) {
                        await Self.read(slow.body, nanosecondsPerByte: 1_000)
                    }
                    let took = ContinuousClock.now - started
                    #expect(outcome.bytes < 12_000_000 || took > timeout, "the read took \(took)")
                    if outcome.longestGap < timeout / 2 { break }
                }
                #expect(
                    outcome.longestGap < timeout / 2,
                    "the reader went \(outcome.longestGap) between pieces in every round")
                #expect(outcome.bytes >= 12_000_000, "\(outcome.bytes) bytes before the connection ended")
            }
        }
    }

    /// Reads `body` to its end or its failure, pausing after each piece for `nanosecondsPerByte`
    /// of its bytes: the bytes read, and the longest time between two pieces' arrivals (the
    /// pause included: a pause that overruns is a reader that stopped reading).
    static func read(_ body: HTTPClientResponse.Body, nanosecondsPerByte: Int) async -> (
        bytes: Int, longestGap: Duration
    ) {
        var bytes = 0
        var longest = Duration.zero
        var last = ContinuousClock.now
        do {
            for try await piece in body {
                let now = ContinuousClock.now
                longest = max(longest, now - last)
                last = now
                bytes += piece.readableBytes
                if nanosecondsPerByte > 0 {
                    try await Task.sleep(for: .nanoseconds(piece.readableBytes * nanosecondsPerByte))
                }
            }
        } catch {
            // The connection ended early: what was read counts.
        }
        return (bytes, longest)
    }
}
