import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import PostgresNIO
import SyncTestSupport
import Testing

@testable import SyncPostgres

/// A deployment's stores spread over several databases by name: each store lives in exactly one,
/// and a database given in another place than the one it records is refused, changing nothing.
@Suite(.enabled(if: TestPostgres.isEnabled))
struct PartitionTests {
    /// Pushes one event to each of `names` through `service`.
    private static func pushOne(to names: [String], through service: SyncService, from replica: Store) async throws {
        for name in names {
            let event = try await replica.put("notes", id: name, fields: ["title": .string("in \(name)")])
            _ = try await service.push(store: name, PushRequest(replica: replica.replicaID, events: [event]))
        }
    }

    /// The store names a database holds.
    private static func storeNames(in database: PostgresBackend) async throws -> [String] {
        try await TestPostgres.withAdminClient(database) { client in
            var names: [String] = []
            for try await name in try await client.query("SELECT name FROM evstore_stores ORDER BY name COLLATE \"C\"")
                .decode(String.self)
            {
                names.append(name)
            }
            return names
        }
    }

    @Test func storesSpreadOverTheDatabasesByNameAndEachLivesInOne() async throws {
        let directory = TemporaryDirectory(prefix: "pg-partitions")
        defer { directory.remove() }
        let databases = try await TestPostgres.freshDatabases(3)
        let service = try SyncService(configuration: .init(backend: .postgres(partitions: databases)))
        defer { service.close() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let names = (0..<24).map { "store-\($0)" }
        try await PartitionTests.pushOne(to: names, through: service, from: replica)

        #expect(try await service.storeNames() == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for (index, database) in databases.enumerated() {
            let held = try await PartitionTests.storeNames(in: database)
            let expected = names.filter { PostgresPartitioning.partition(of: $0, count: 3) == index }
            #expect(Set(held) == Set(expected), "partition \(index)")
            #expect(!held.isEmpty, "partition \(index) holds no store of 24")
        }
        for name in names {
            let page = try await service.pull(store: name, after: 0, limit: 10)
            #expect(page.events.count == 1 && page.events.first?.item == name)
        }
        // A second process with the same databases in the same order serves the same stores.
        let other = try SyncService(configuration: .init(backend: .postgres(partitions: databases)))
        defer { other.close() }
        #expect(try await other.info(store: "store-7").head == 1)
    }

    @Test func databasesInAnotherOrderOrNumberAreRefusedAndNothingIsWritten() async throws {
        let directory = TemporaryDirectory(prefix: "pg-partition-order")
        defer { directory.remove() }
        let databases = try await TestPostgres.freshDatabases(2)
        let service = try SyncService(configuration: .init(backend: .postgres(partitions: databases)))
        defer { service.close() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let names = (0..<8).map { "s\($0)" }
        try await PartitionTests.pushOne(to: names, through: service, from: replica)
        let before = [
            try await PartitionTests.storeNames(in: databases[0]),
            try await PartitionTests.storeNames(in: databases[1]),
        ]

        let misconfigured: [(String, SyncBackend)] = [
            ("reversed", .postgres(partitions: databases.reversed())),
            ("one of two alone", .postgres(databases[1])),
            ("with a third", .postgres(partitions: databases + [try await TestPostgres.freshDatabase()])),
        ]
        for (label, backend) in misconfigured {
            let wrong = try SyncService(configuration: .init(backend: backend))
            defer { wrong.close() }
            let event = try await replica.put("notes", id: "late", fields: ["title": "must not land"])
            for name in ["s0", "s1", "new-store"] {
                do {
                    _ = try await wrong.push(store: name, PushRequest(replica: replica.replicaID, events: [event]))
                    Issue.record("\(label): a push to \(name) was accepted")
                } catch let error as SyncError {
                    #expect(
                        error.message.contains("of its deployment, but the server was given it as"),
                        "\(label): \(error)")
                }
            }
        }
        let after = [
            try await PartitionTests.storeNames(in: databases[0]),
            try await PartitionTests.storeNames(in: databases[1]),
        ]
        #expect(after == before)
        for name in names { #expect(try await service.info(store: name).head == 1) }
    }

    @Test func aDatabaseHoldingAWholeDeploymentCannotBecomeAPartition() async throws {
        let directory = TemporaryDirectory(prefix: "pg-partition-whole")
        defer { directory.remove() }
        let whole = try await TestPostgres.freshDatabase()
        let single = try SyncService(configuration: .init(backend: .postgres(whole)))
        defer { single.close() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        try await PartitionTests.pushOne(to: ["notes"], through: single, from: replica)

        let spread = try SyncService(
            configuration: .init(backend: .postgres(partitions: [whole, try await TestPostgres.freshDatabase()])))
        defer { spread.close() }
        do {
            _ = try await spread.info(store: "notes")
            Issue.record("a database holding a whole deployment became a partition")
        } catch let error as SyncError {
            #expect(error.message.contains("is a database holding every store"), "\(error)")
        }
        #expect(try await single.info(store: "notes").head == 1)
    }

    @Test func aDatabaseOfLayoutOneIsUpgradedAndRecordedWhole() async throws {
        let database = try await TestPostgres.freshDatabase()
        let first = try SyncService(configuration: .init(backend: .postgres(database)))
        _ = try await first.storeNames()
        first.close()
        // Make it what layout 1 wrote: no partition table, no declared stamps, version 1.
        try await TestPostgres.withAdminClient(database) { client in
            try await client.query("DROP TABLE evstore_partition")
            try await client.query("ALTER TABLE evstore_replicas DROP COLUMN declared_stamp")
            try await client.query("DELETE FROM evstore_schema")
            try await client.query("INSERT INTO evstore_schema (version) VALUES (1)")
        }
        let upgraded = try SyncService(configuration: .init(backend: .postgres(database)))
        defer { upgraded.close() }
        #expect(try await upgraded.storeNames().isEmpty)
        let (version, partitions) = try await TestPostgres.withAdminClient(database) { client in
            var version: Int32 = 0
            for try await found in try await client.query("SELECT max(version) FROM evstore_schema").decode(Int32.self)
            {
                version = found
            }
            var partitions: [Int32] = []
            for try await (position, count) in try await client.query("SELECT position, count FROM evstore_partition")
                .decode((Int32, Int32).self)
            {
                partitions += [position, count]
            }
            return (version, partitions)
        }
        #expect(version == PostgresSchema.version && partitions == [0, 1])
        // The replicas' table has its stamps again: a push that declares what it holds works.
        try await withTemporaryStore { replica in
            let event = try await replica.put("notes", id: "n1", fields: ["title": "one"])
            let response = try await upgraded.push(
                store: "notes", PushRequest(replica: replica.replicaID, events: [event], through: 1))
            #expect(response.accepted == 1)
        }
    }

    /// A store kept by layout 3 (no keys) gets a key for its epoch on its first request after the
    /// upgrade (a push here: the key it makes is the one later answers sign with): its marks are
    /// signed from then on, and the epoch stays.
    @Test func aStoreOfLayoutThreeGetsAKeyForItsEpoch() async throws {
        let database = try await TestPostgres.freshDatabase()
        let first = try SyncService(configuration: .init(backend: .postgres(database)))
        let directory = TemporaryDirectory(prefix: "pg-key")
        defer { directory.remove() }
        let replica = try Store.open(at: directory.appending("replica"))
        defer { replica.close() }
        let event = try await replica.put("notes", id: "n1", fields: ["title": "one"])
        _ = try await first.push(store: "notes", PushRequest(replica: replica.replicaID, events: [event]))
        let before = try await first.info(store: "notes")
        first.close()
        try await TestPostgres.withAdminClient(database) { client in
            try await client.query("ALTER TABLE evstore_stores DROP COLUMN epoch_key")
            try await client.query("DELETE FROM evstore_schema")
            try await client.query("INSERT INTO evstore_schema (version) VALUES (3)")
        }
        let upgraded = try SyncService(configuration: .init(backend: .postgres(database)))
        defer { upgraded.close() }
        let second = try await replica.put("notes", id: "n2", fields: ["title": "two"])
        let pushed = try await upgraded.push(
            store: "notes", PushRequest(replica: replica.replicaID, events: [second]))
        let info = try await upgraded.info(store: "notes")
        #expect(info.epoch == before.epoch && info.head == 2)
        let signature = try #require(info.signature, "the upgraded store signs its marks")
        #expect(pushed.signature == signature, "the push made the key that the info signs with")
        #expect(signature != before.signature, "with a key of its own")
        let mark = ContinuityCheck(epoch: info.epoch, seq: 2, digest: info.digest, signature: signature)
        #expect(try await upgraded.info(store: "notes", check: mark).epoch == info.epoch)
        await expectSyncError(.unverifiedMark) {
            _ = try await upgraded.info(
                store: "notes", check: ContinuityCheck(epoch: info.epoch, seq: 3, digest: info.digest))
        }
    }

    /// A partition whose database does not answer makes requests unavailable at the request
    /// timeout, for every store, not when its connection attempts give up (60–90 s).
    @Test func anUnreachablePartitionIsUnavailableAtTheRequestTimeout() async throws {
        var reachable = try await TestPostgres.freshDatabase()
        reachable.requestTimeout = .seconds(1)
        // Port 1 on loopback: nothing listens there.
        var unreachable = PostgresBackend(host: "127.0.0.1", port: 1, username: "x", database: "x")
        unreachable.requestTimeout = .seconds(1)
        let service = try SyncService(configuration: .init(backend: .postgres(partitions: [reachable, unreachable])))
        defer { service.close() }
        let name = try #require(
            (0..<64).map { "store-\($0)" }.first { PostgresPartitioning.partition(of: $0, count: 2) == 0 })
        for _ in 0..<2 {
            let (waited, lateness) = try await measuringTimerLateness {
                await expectSyncError(.unavailable) { try await service.info(store: name) }
            }
            #expect(waited < .seconds(30) + lateness, "the request waited \(waited), timers ran \(lateness) late")
        }
    }

    @Test func thePartitionOfANameNeverChanges() {
        // The rule is part of every deployment's data: these values must stay as they are.
        #expect(PostgresPartitioning.partition(of: "notes", count: 1) == 0)
        #expect((0..<24).map { PostgresPartitioning.partition(of: "store-\($0)", count: 3) }.reduce(0, +) > 0)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "notes".utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        #expect(PostgresPartitioning.partition(of: "notes", count: 7) == Int(hash % 7))
    }
}
