import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Testing

/// A graceful shutdown of the sync server finishes the pushes in flight.
struct GracefulShutdownTests {
    @Test("a graceful shutdown finishes a push in flight: it is answered 200 and its events are stored")
    func shutdownFinishesAPushInFlight() async throws {
        let directory = TemporaryDirectory(prefix: "graceful-push")
        defer { directory.remove() }
        let (events, replica) = try await {
            let client = try Store.open(at: directory.appending("client"))
            defer { client.close() }
            let events = try await client.append(
                (0..<200).map { .put("notes", id: "n\($0)", fields: ["title": .string("note \($0)")]) })
            return (events, client.replicaID)
        }()
        let body = Array(PushRequest(replica: replica, events: events).jsonBytes())
        let server = try await ServerHarness(dataDirectory: directory.appending("data"))
        let head =
            "POST /v1/stores/notes/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServerHarness.adminToken)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let half = body.count / 2
        // The headers and half the body (ASCII, so any split is a valid string), then the stop.
        let connection = RawConnection(
            port: server.port, sending: head + String(decoding: body[..<half], as: UTF8.self),
            receiveTimeout: .seconds(20))
        #expect(connection.connected)
        try await Task.sleep(for: .milliseconds(300))
        let stopping = Task { try await server.stop() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(connection.write(String(decoding: body[half...], as: UTF8.self)), "the connection was closed mid-body")
        let (answer, _) = connection.readUntilClosed(timeout: .seconds(20))
        try await stopping.value
        let restarted = try await ServerHarness(dataDirectory: directory.appending("data"))
        let stored = try await restarted.head(of: "notes")
        try await restarted.stop()
        let statuses = RawConnection.statuses(in: answer)
        if statuses.isEmpty {
            // On a starved machine the stop can begin before the server has read the request's
            // headers; then the push was not in flight. Unanswered, it is stored whole or not at
            // all (pushes are idempotent: a retry is acknowledged as duplicates). Run alone, the
            // push is in flight every time and takes the branch below.
            #expect(stored == 0 || stored == 200, "an unanswered push was partly stored: \(stored) events")
        } else {
            #expect(statuses == [200], "\(answer.prefix(300))")
            #expect(stored == 200, "an acknowledged push lost events")
        }
    }
}
