import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import SyncTestSupport
import Testing

/// A process killed with SIGKILL at a random moment loses no acknowledged event and leaves a
/// store that reopens, decodes and verifies.
@Suite("Crash safety", .serialized)
struct CrashSafetyTests {
    /// One acknowledged event, as printed by `evstore-crash append`.
    struct Ack: Hashable {
        var seq: UInt64
        var originSeq: UInt64
        var random: UInt64
    }

    static func acks(_ lines: [String]) -> [Ack] {
        lines.compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 4, parts[0] == "ack", let seq = UInt64(parts[1]), let originSeq = UInt64(parts[2]),
                let random = UInt64(parts[3], radix: 16)
            else { return nil }
            return Ack(seq: seq, originSeq: originSeq, random: random)
        }
    }

    /// What `evstore-crash` writes for `random` (mirrors `CrashWorkload.change(random:)`).
    static func expectedContent(_ random: UInt64) -> (item: String, fields: [String: Value]?) {
        let words = ["alpha", "beta", "gamma", "delta", "동기화", "메모", "sync", "crash", "ledger", "kiwi"]
        let item = "i\(random % 64)"
        if random % 17 == 0 { return (item, nil) }
        let title = "\(words[Int(random >> 8) % words.count]) \(words[Int(random >> 16) % words.count])"
        return (item, ["title": .string(title), "r": .string(String(random, radix: 16))])
    }

    /// Checks one event against the content rules; returns a problem or nil.
    static func contentProblem(_ event: Event, random: UInt64? = nil) -> String? {
        guard event.collection == "crash" else { return "seq \(event.seq): unexpected collection \(event.collection)" }
        let inferred: UInt64
        if let random {
            inferred = random
        } else if event.operation == .delete {
            return event.item.hasPrefix("i") ? nil : "seq \(event.seq): bad item \(event.item)"
        } else if case .string(let hex)? = event.fields["r"], let value = UInt64(hex, radix: 16) {
            inferred = value
        } else {
            return "seq \(event.seq): no r field in \(event.fields)"
        }
        let expected = expectedContent(inferred)
        guard event.item == expected.item else {
            return "seq \(event.seq): item \(event.item), expected \(expected.item)"
        }
        if let fields = expected.fields {
            guard event.operation == .put, event.fields == fields else {
                return "seq \(event.seq): \(event.operation) \(event.fields), expected put \(fields)"
            }
        } else if event.operation != .delete {
            return "seq \(event.seq): \(event.operation), expected delete"
        }
        return nil
    }

    @Test("append: every acknowledged event survives SIGKILL; log dense, decodable, projections consistent")
    func killDuringAppend() async throws {
        let directory = TemporaryDirectory(prefix: "crash-append")
        defer { directory.remove() }
        let path = directory.appending("store")
        let seed = Reliability.fixedSeed ?? 0xC0FFEE
        var generator = SeededGenerator(seed: seed)
        let kills = Reliability.count(ci: 50, long: 500)
        var acknowledged: [UInt64: Ack] = [:]  // seq → ack, over every run
        var killedWhileRunning = 0
        var runsWithAcks = 0
        var replica: ReplicaID?
        let started = ContinuousClock.now

        for round in 0..<kills {
            let child = try ChildProcess(["append", path, String(seed &+ UInt64(round))])
            let delay = Int.random(in: 30...250, using: &generator)
            try await Task.sleep(for: .milliseconds(delay))
            if child.killNow() { killedWhileRunning += 1 }
            let acks = CrashSafetyTests.acks(child.lines)
            if !child.errorText.isEmpty {
                Issue.record("round \(round): the tool wrote to stderr: \(child.errorText)")
            }
            if !acks.isEmpty { runsWithAcks += 1 }
            for ack in acks {
                if let previous = acknowledged[ack.seq], previous != ack {
                    Issue.record("round \(round): seq \(ack.seq) acknowledged twice: \(previous) then \(ack)")
                }
                acknowledged[ack.seq] = ack
            }

            // Reopen and check, then close before the next child starts.
            let problems: [String] = try withStore(at: path) { store in
                var problems: [String] = []
                if let replica, replica != store.replicaID { problems.append("replica id changed") }
                replica = store.replicaID
                let head = try store.head()
                var expectedSeq: UInt64 = 1
                var seenOrigin: Set<UInt64> = []
                try store.read { reader in
                    try reader.forEachEvent { event in
                        if event.seq != expectedSeq {
                            problems.append("seq \(event.seq) where \(expectedSeq) was expected")
                        }
                        expectedSeq = event.seq + 1
                        if event.id.origin != store.replicaID { problems.append("seq \(event.seq): foreign origin") }
                        if !seenOrigin.insert(event.id.sequence).inserted {
                            problems.append("seq \(event.seq): origin seq \(event.id.sequence) appears twice")
                        }
                        if let problem = CrashSafetyTests.contentProblem(event) { problems.append(problem) }
                        return true
                    }
                    if expectedSeq - 1 != head { problems.append("log ends at \(expectedSeq - 1), head is \(head)") }
                    for ack in acknowledged.values {
                        guard let event = try reader.event(at: ack.seq) else {
                            problems.append("acknowledged seq \(ack.seq) is missing (head \(head))")
                            continue
                        }
                        if event.id.sequence != ack.originSeq {
                            problems.append(
                                "seq \(ack.seq): origin seq \(event.id.sequence), acknowledged \(ack.originSeq)")
                        }
                        if let problem = CrashSafetyTests.contentProblem(event, random: ack.random) {
                            problems.append(problem)
                        }
                    }
                }
                // The tool declares an index on the titles: the store records it, and its runs
                // count every item (verify below compares its entries with a rebuild).
                let indexed = try store.count(Query("crash").sorted(by: "title"))
                let items = try store.count(in: "crash")
                if indexed != items { problems.append("the title index counts \(indexed) items of \(items)") }
                // verify() rebuilds in scratch: every round in long mode, every 5th in CI (and the last).
                if Reliability.isLong || round % 5 == 4 || round == kills - 1 {
                    let report = try store.verify()
                    if !report.isConsistent { problems.append("verify: \(report.problems.prefix(5))") }
                }
                return problems
            }
            #expect(problems.isEmpty, "round \(round) (seed \(seed), delay \(delay) ms): \(problems.prefix(10))")
            if !problems.isEmpty { break }
        }
        let elapsed = ContinuousClock.now - started
        print(
            "crash-safety append: \(kills) kills (\(killedWhileRunning) while running, \(runsWithAcks) after acks), "
                + "\(acknowledged.count) acknowledged events survived, seed \(seed), \(elapsed)")
        #expect(killedWhileRunning >= kills * 9 / 10)
        #expect(runsWithAcks >= kills / 2, "the tool rarely got to commit before the kill")
        #expect(acknowledged.count > 100)
    }

    @Test("rebuild: a rebuild killed at any point (in one pass or in passes) leaves items and search as they were")
    func killDuringRebuild() async throws {
        let directory = TemporaryDirectory(prefix: "crash-rebuild")
        defer { directory.remove() }
        let path = directory.appending("store")
        let seed = Reliability.fixedSeed ?? 0xBADC0DE
        var generator = SeededGenerator(seed: seed)
        let before: StoreSnapshot = try await {
            let store = try Store.open(at: path)
            defer { store.close() }
            var changes: [Change] = []
            for index in 0..<4000 {
                let random = generator.next()
                changes.append(
                    .put(
                        "notes", id: "n\(random % 900)",
                        fields: [
                            "title": .string("\(["alpha", "beta", "gamma", "동기화를"][index % 4]) note \(index)"),
                            "content": .string("delta kiwi ledger \(random % 1000)"), "tags": .array([.string("work")]),
                        ]))
                if index % 11 == 0 { changes.append(.delete("notes", id: "n\(random % 300)")) }
            }
            _ = try await store.append(changes)
            return try StoreSnapshot(store)
        }()
        #expect(before.items.count > 100)

        let kills = Reliability.count(ci: 12, long: 120)
        var completedRebuilds = 0
        for round in 0..<kills {
            // Every other rebuild holds at most 100 of the 900 items: it replays the log in passes.
            let child = try ChildProcess(["rebuild", path] + (round % 2 == 1 ? ["100"] : []))
            let delay = Int.random(in: 30...250, using: &generator)
            // The delay runs from the moment the store is open, so the kill lands in a rebuild.
            #expect(await child.waitForLine(timeout: .seconds(20)) { $0.hasPrefix("ready") })
            try await Task.sleep(for: .milliseconds(delay))
            child.killNow()
            completedRebuilds += child.lines.filter { $0.hasPrefix("rebuilt") }.count
            #expect(child.errorText.isEmpty, "round \(round): \(child.errorText)")
            let (after, report) = try await offPool {
                try withStore(at: path) { store in (try StoreSnapshot(store), try store.verify()) }
            }
            #expect(
                after == before,
                "round \(round) (seed \(seed), delay \(delay) ms): projections differ after a killed rebuild")
            #expect(report.isConsistent, "round \(round): \(report.problems.prefix(5))")
            // The tool declared an index on the notes' titles: it counts every item.
            let indexed = try withStore(at: path) { try $0.count(Query("notes").sorted(by: "title")) }
            #expect(indexed == before.items.count, "round \(round)")
            if after != before || !report.isConsistent { break }
        }
        print(
            "crash-safety rebuild: \(kills) kills, \(completedRebuilds) rebuilds completed between kills, seed \(seed)")
    }

    @Test("pull: a pull killed mid-page resumes; no event lost or duplicated", arguments: TestBackend.all)
    func killDuringPull(backend: TestBackend) async throws {
        let directory = TemporaryDirectory(prefix: "crash-pull")
        defer { directory.remove() }
        let server = try await ServerHarness(dataDirectory: directory.appending("server"), backend: backend)
        // Fill the server's `notes` from a source replica.
        let sourceEvents: [Event]
        do {
            let source = try Store.open(at: directory.appending("source"))
            defer { source.close() }
            for chunk in 0..<30 {
                _ = try await source.append(
                    (0..<100).map { index in
                        .put(
                            "notes", id: "n\(chunk)-\(index % 60)",
                            fields: ["title": .string("alpha \(chunk) \(index)")])
                    })
            }
            let synchronizer = Synchronizer(
                store: source,
                transport: HTTPTransport(baseURL: server.baseURL, token: ServerHarness.notesToken, storeName: "notes"),
                remoteName: "server")
            try await synchronizer.sync()
            sourceEvents = try allEvents(of: source)
        }
        #expect(try await server.head(of: "notes") == 3000)

        let seed = Reliability.fixedSeed ?? 0x9011
        var generator = SeededGenerator(seed: seed)
        let path = directory.appending("client")
        var runs = 0
        var kills = 0
        var finished = false
        let maxRuns = Reliability.count(ci: 40, long: 200)
        while !finished && runs < maxRuns {
            runs += 1
            let child = try ChildProcess(["pull", path, server.baseURL, ServerHarness.notesToken, "notes"])
            let delay = Int.random(in: 5...150, using: &generator)
            _ = await child.waitForLine(timeout: .seconds(20)) { $0.hasPrefix("ready") }
            try await Task.sleep(for: .milliseconds(delay))
            if child.killNow() { kills += 1 }
            finished = child.lines.contains("done")
            if !child.errorText.isEmpty { Issue.record("run \(runs): \(child.errorText)") }
            // After every kill the log holds each pulled event once, in a dense log.
            let problems: [String] = try withStore(at: path) { store in
                let events = try allEvents(of: store)
                var problems: [String] = []
                if Set(events.map(\.id)).count != events.count { problems.append("duplicate event ids") }
                if events.map(\.seq) != Array(1...UInt64(max(events.count, 1))).prefix(events.count).map({ $0 }) {
                    problems.append("log not dense")
                }
                let report = try store.verify()
                if !report.isConsistent { problems.append("verify: \(report.problems.prefix(3))") }
                return problems
            }
            #expect(problems.isEmpty, "run \(runs) (seed \(seed)): \(problems)")
        }
        // Finish in process if the kills never let it complete.
        try await {
            let store = try Store.open(at: path)
            defer { store.close() }
            let synchronizer = Synchronizer(
                store: store,
                transport: HTTPTransport(baseURL: server.baseURL, token: ServerHarness.notesToken, storeName: "notes"),
                remoteName: "server")
            let report = try await synchronizer.sync()
            let events = try allEvents(of: store)
            #expect(events.count == sourceEvents.count, "report \(report)")
            #expect(Set(events.map(\.id)) == Set(sourceEvents.map(\.id)))
            #expect(events.map(\.seq) == Array(1...UInt64(events.count)))
            #expect(try store.verify().isConsistent)
        }()
        try await server.stop()
        print(
            "crash-safety pull (\(backend)): \(runs) runs, \(kills) killed mid-pull, finished by the tool: \(finished), seed \(seed)"
        )
        #expect(kills >= 1)
    }
}
