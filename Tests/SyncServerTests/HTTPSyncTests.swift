import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import NIOHTTP1
import SyncServer
import SyncTestSupport
import Testing

/// Sync between replicas through a real server on 127.0.0.1.
struct HTTPSyncTests {
    static func snapshot(_ store: Store) throws -> [Item] {
        try store.read { try $0.items(in: "notes", limit: 10_000).items }
    }

    @Test func twoClientsConvergeThroughTheServer() async throws {
        try await withServer { fixture in
            let alice = try fixture.client("alice")
            let bob = try fixture.client("bob", skew: -20_000)
            for index in 0..<120 {
                try await alice.put(
                    "notes", id: "a\(index)", fields: ["title": .string("alpha \(index)"), "n": .int(Int64(index))])
            }
            try await bob.append(
                (0..<30).map { .put("notes", id: "b\($0)", fields: ["title": .string("동기화 \($0)"), "score": 0.5]) })
            let first = try await fixture.synchronizer(alice).sync()
            #expect(first.pushed == 120)
            let second = try await fixture.synchronizer(bob).sync()
            #expect(second.pushed == 30 && second.pulled == 120)
            let third = try await fixture.synchronizer(alice).sync()
            #expect(third.pulled == 30)
            #expect(try Self.snapshot(alice) == Self.snapshot(bob))
            #expect(try alice.search("동기화", in: "notes").count == bob.search("동기화", in: "notes").count)
            #expect(try alice.search("동기화", in: "notes").count == 20)
            let info = try RemoteInfo(json: try await fixture.send(.GET, "/v1/stores/notes").body)
            #expect(info.head == 150)
            // Nothing left to do.
            let idle = try await fixture.synchronizer(bob).sync()
            #expect(idle.pushed == 0 && idle.pulled == 0)
            #expect(try fixture.synchronizer(bob).pendingCount() == 0)
        }
    }

    @Test func concurrentOfflineEditsOfOneFieldOverHTTP() async throws {
        try await withServer { fixture in
            let alice = try fixture.client("alice")
            let bob = try fixture.client("bob", skew: 500)
            try await alice.put("notes", id: "n", fields: ["title": "v0"])
            try await fixture.synchronizer(alice).sync()
            try await fixture.synchronizer(bob).sync()
            try await alice.patch("notes", id: "n", fields: ["title": "alice"])
            try await bob.patch("notes", id: "n", fields: ["title": "bob"])  // later stamp: its clock is ahead
            try await fixture.synchronizer(alice).sync()
            try await fixture.synchronizer(bob).sync()
            let report = try await fixture.synchronizer(alice).sync()
            #expect(try alice.item("notes", "n")?["title"] == "bob")
            #expect(try bob.item("notes", "n")?["title"] == "bob")
            #expect(report.conflicts == 1)
            #expect(report.conflictRecords.first?.loser.value == "alice")
        }
    }

    @Test func anEpochChangeAfterARestoreLosesNothing() async throws {
        try await withServer { fixture in
            let a = try fixture.client("a")
            let b = try fixture.client("b")
            try await a.append((0..<10).map { .put("notes", id: "a\($0)", fields: ["title": "first"]) })
            try await fixture.synchronizer(a).sync()

            // Copy the data directory while the server is stopped.
            try await fixture.stop()
            let backup = fixture.directory.appending("backup")
            try FileManager.default.copyItem(atPath: fixture.dataDirectory, toPath: backup)
            try await fixture.start()
            let epoch = try RemoteInfo(json: try await fixture.send(.GET, "/v1/stores/notes").body).epoch

            try await a.append((0..<10).map { .put("notes", id: "late\($0)", fields: ["title": "second"]) })
            try await b.append((0..<5).map { .put("notes", id: "b\($0)", fields: ["title": "bee"]) })
            try await fixture.synchronizer(a).sync()
            try await fixture.synchronizer(b).sync()

            // Restore the old copy.
            try await fixture.stop()
            try FileManager.default.removeItem(atPath: fixture.dataDirectory)
            try FileManager.default.copyItem(atPath: backup, toPath: fixture.dataDirectory)
            try await fixture.start()
            #expect(try RemoteInfo(json: try await fixture.send(.GET, "/v1/stores/notes").body).head == 10)

            let reportA = try await fixture.synchronizer(a).sync()
            #expect(reportA.epochChanged)
            let reportB = try await fixture.synchronizer(b).sync()
            #expect(reportB.epochChanged)
            try await fixture.synchronizer(a).sync()

            let info = try RemoteInfo(json: try await fixture.send(.GET, "/v1/stores/notes").body)
            #expect(info.epoch != epoch)
            #expect(info.head == 25)
            #expect(try a.count(in: "notes") == 25)
            #expect(try Self.snapshot(a) == Self.snapshot(b))
        }
    }

    @Test func gracefulShutdownClosesTheStores() async throws {
        try await withServer { fixture in
            let client = try fixture.client("c")
            try await client.put("notes", id: "x", fields: ["title": "kept"])
            try await fixture.synchronizer(client).sync()
            try await fixture.stop()
            // The server's store is closed: it opens again, with the event.
            try Self.inspect(fixture.dataDirectory + "/notes") { (reopened: Store) throws in
                #expect(try reopened.head() == 1)
                #expect(try reopened.item("notes", "x")?["title"] == "kept")
                #expect(try reopened.search("kept").count == 1)
            }
            let down = HTTPTransport(
                baseURL: fixture.baseURL, token: ServerFixture.notesToken, storeName: "notes", timeout: .seconds(1))
            await expectSyncError(.transport) {
                try await Synchronizer(store: client, transport: down, remoteName: "server").sync()
            }
            try await fixture.start()
        }
    }

    /// Opens a store for `body`, then closes it and lets it go.
    static func inspect(_ path: String, _ body: (Store) throws -> Void) throws {
        var configuration = Store.Configuration()
        configuration.projections = SyncService.requiredProjections
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        try body(store)
    }

    @Test func tokenFiles() throws {
        let table = try TokenTable(
            parsing: """
                # comment line

                t1 notes tasks   # trailing comment
                \tt2\t*
                """)
        #expect(table.count == 2)
        #expect(table.grant(for: "t1") == .stores(["notes", "tasks"]))
        #expect(table.grant(for: "t1")?.allows("tasks") == true)
        #expect(table.grant(for: "t1")?.allows("other") == false)
        #expect(table.grant(for: "t2")?.allows("anything") == true)
        #expect(table.grant(for: "#") == nil)
        #expect(throws: TokenTable.ParseError.self) { try TokenTable(parsing: "lonely") }
        #expect(throws: TokenTable.ParseError.self) { try TokenTable(parsing: "t ../etc") }
        #expect(throws: TokenTable.ParseError.self) { try TokenTable(parsing: "t a\nt b") }
    }
}
