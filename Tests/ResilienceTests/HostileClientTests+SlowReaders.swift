import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import NIOHTTP1
import SyncTestSupport
import Testing

/// Clients that read a response slowly or not at all, against a real server: one that stops
/// reading has its connection closed after the write timeout; one that keeps reading, however
/// slowly against the timeout, gets the whole response.
extension HostileClientTests {
    @Test("a client that stops reading a page is cut after the write timeout; a slow reader gets it whole")
    func stalledReadersAreCut() async throws {
        let directory = TemporaryDirectory(prefix: "hostile-slow-readers")
        defer { directory.remove() }
        var limits = SyncLimits()
        limits.maxPageBytes = 16 << 20
        let server = try await ServerHarness(
            dataDirectory: directory.appending("data"), limits: limits, writeTimeout: .seconds(2))
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        // 60 events of 200 KB: a page of 12 MB, more than the kernel's socket buffers hold.
        let text = String(repeating: "x", count: 200_000)
        for round in 0..<12 {
            var events: [Event] = []
            for index in 0..<5 {
                events.append(try await replica.put("files", id: "f\(round)-\(index)", fields: ["body": .string(text)]))
            }
            let reply = try await server.send(
                .POST, "/v1/stores/files/events",
                body: PushRequest(replica: replica.replicaID, events: events).jsonBytes())
            #expect(reply.status == 200, "\(reply.text.prefix(300))")
        }
        let pull =
            "GET /v1/stores/files/events?after=0&limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Authorization: Bearer \(ServerHarness.adminToken)\r\n\r\n"

        // Reads nothing for 5 s, then everything it can: the server closed the connection before
        // the page was sent (we see the end of the stream, not our 10 s timeout).
        let stalled = RawConnection(port: server.port, sending: pull)
        #expect(stalled.connected)
        try await Task.sleep(for: .seconds(5))
        let (received, closed) = stalled.readUntilClosed(timeout: .seconds(10))
        #expect(closed, "the server closed the stalled connection")
        #expect(received.utf8.count < 12_000_000, "\(received.utf8.count) bytes received")

        // Reads 16 KiB every 4 ms or so, on a thread of its own (a test task may wait seconds for
        // a turn in the parallel suite): the page takes longer than the write timeout to arrive,
        // but no 2 s pass without progress.
        let port = server.port
        let slowRead = await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Bool), Never>) in
            Thread.detachNewThread {
                let slow = RawConnection(port: port, sending: pull, receiveTimeout: .seconds(5))
                var bytes = 0
                var ended = false
                let deadline = ContinuousClock.now + .seconds(60)
                while bytes < 12_000_000, !ended, ContinuousClock.now < deadline {
                    guard let chunk = slow.receive() else { break }
                    ended = chunk.isEmpty
                    bytes += chunk.count
                    Thread.sleep(forTimeInterval: 0.004)
                }
                continuation.resume(returning: (bytes, ended))
            }
        }
        #expect(!slowRead.1 && slowRead.0 >= 12_000_000, "\(slowRead.0) bytes before the connection ended")
        try await server.stop()
    }

    @Test("idle and write timeouts meant as never (.seconds(.max)) start the server, which serves")
    func timeoutsMeantAsNever() async throws {
        let directory = TemporaryDirectory(prefix: "hostile-never")
        defer { directory.remove() }
        let server = try await ServerHarness(
            dataDirectory: directory.appending("data"), idleTimeout: .seconds(Int64.max),
            writeTimeout: .seconds(Int64.max))
        let reply = try await server.send(.GET, "/healthz", token: nil)
        #expect(reply.status == 200)
        try await server.stop()
    }
}
