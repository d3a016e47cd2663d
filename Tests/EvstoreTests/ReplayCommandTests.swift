import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore replay`: the state at a seq or a clock stamp equals the state computed by folding the
/// writes the test made (``SingleReplicaHistory``, ``foldWrites(_:)``), and `--step` shows each
/// event of an item with what it changed.
@Suite("evstore replay")
struct ReplayCommandTests {
    @Test("replay --to SEQ equals the fold of the first SEQ writes, at several seqs")
    func replayToSeq() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            let history = try SingleReplicaHistory(path: directory.appending("store"), count: 60, seed: 7)
            #expect(history.events.map(\.seq) == Array(1...60))
            for seq in [0, 1, 2, 9, 23, 41, 59, 60, 1000] {
                let result = try await EvstoreProcess.run([
                    "replay", history.path, "--to", "\(seq)", "--format", "jsonl",
                ])
                #expect(result.status == 0, "\(result)")
                let lines = JSONLines.objects(result)
                #expect(lines.allSatisfy { JSONLines.keys($0) == ["collection", "fields", "id", "version"] })
                let expected = history.expectedItems(after: min(seq, 60))
                #expect(JSONLines.items(lines) == JSONLines.items(expected), "replay --to \(seq)")
                #expect(lines.count == expected.count)
            }
            // Without a point: everything, which is also what dump --items shows.
            let all = try await EvstoreProcess.run(["replay", history.path, "--format", "jsonl"])
            let items = try await EvstoreProcess.run(["dump", history.path, "--items", "--format", "jsonl"])
            #expect(all.status == 0 && items.status == 0, "\(all)\n\(items)")
            #expect(JSONLines.items(JSONLines.objects(all)) == JSONLines.items(history.expectedItems(after: 60)))
            #expect(all.stdout == items.stdout)
        }
    }

    @Test("replay --to SEQ --collection C keeps one collection")
    func replayOneCollection() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            let history = try SingleReplicaHistory(path: directory.appending("store"), count: 40, seed: 11)
            let result = try await EvstoreProcess.run(
                ["replay", history.path, "--to", "30", "--collection", "tasks", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let expected = history.expectedItems(after: 30).filter { $0.value.collection == "tasks" }
            #expect(JSONLines.items(JSONLines.objects(result)) == JSONLines.items(expected))
        }
    }

    @Test("replay --at HLC equals the fold of the writes stamped at or before it")
    func replayAtClockStamp() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            let history = try SingleReplicaHistory(path: directory.appending("store"), count: 50, seed: 3)
            for count in [1, 17, 38, 50] {
                let stamp = history.events[count - 1].hlc
                let result = try await EvstoreProcess.run([
                    "replay", history.path, "--at", "\(stamp.rawValue)", "--format", "jsonl",
                ])
                #expect(result.status == 0, "\(result)")
                #expect(
                    JSONLines.items(JSONLines.objects(result)) == JSONLines.items(history.expectedItems(after: count)),
                    "replay --at the stamp of event \(count)")
                // One stamp earlier is the state before that event.
                let before = try await EvstoreProcess.run(
                    ["replay", history.path, "--at", "\(stamp.rawValue - 1)", "--format", "jsonl"])
                #expect(
                    JSONLines.items(JSONLines.objects(before))
                        == JSONLines.items(history.expectedItems(after: count - 1)),
                    "replay --at one below the stamp of event \(count)")
            }
        }
    }

    @Test("replay --item C/ID --step prints each event of the item and exactly what it changed")
    func stepThroughOneItem() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            let history = try SingleReplicaHistory(path: directory.appending("store"), count: 60, seed: 7)
            // The item with the most writes.
            let keys = history.changes.map { "\($0.collection)/\($0.item)" }
            let key = try #require(
                Set(keys).max { a, b in keys.filter { $0 == a }.count < keys.filter { $0 == b }.count })
            let upTo = 45
            let result = try await EvstoreProcess.run(
                ["replay", history.path, "--item", key, "--step", "--to", "\(upTo)", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            let seqs = history.events.prefix(upTo).filter { "\($0.collection)/\($0.item)" == key }.map { Int($0.seq) }
            try #require(lines.count == seqs.count, "\(result)")
            #expect(seqs.count >= 5, "the item is written several times")
            for (line, seq) in zip(lines, seqs) {
                #expect(
                    JSONLines.keys(line) == [
                        "changes", "collection", "event", "hlc", "item", "item_after", "op", "original", "schema",
                        "seq",
                    ])
                #expect(JSONLines.int(line, "seq") == seq)
                let change = history.changes[seq - 1]
                #expect(JSONLines.string(line, "op") == change.operation.description)
                #expect(JSONLines.string(line, "hlc") == String(history.events[seq - 1].hlc.rawValue))
                #expect(
                    JSONLines.object(line, "event").flatMap { JSONLines.int($0, "seq") } == seq,
                    "one replica: origin seq = log seq")
                let before = history.expectedItems(after: seq - 1)[key]?.fields ?? [:]
                let after = history.expectedItems(after: seq)[key]?.fields
                var expected: [String] = []
                for field in Set(before.keys).union((after ?? [:]).keys).sorted() where before[field] != after?[field] {
                    let outcome = after?[field] == nil ? "cleared" : "set"
                    expected.append(
                        "\(field) \(outcome) \(JSONLines.canonical(before[field])) → \(JSONLines.canonical(after?[field]))"
                    )
                }
                let printed = (line["changes"] as? [[String: Any]] ?? []).map {
                    "\(JSONLines.string($0, "field") ?? "?") \(JSONLines.string($0, "outcome") ?? "?") "
                        + "\(JSONLines.canonical($0["old"])) → \(JSONLines.canonical($0["new"]))"
                }
                #expect(printed == expected, "seq \(seq): \(change.operation)")
                #expect(
                    JSONLines.canonical(line["item_after"])
                        == JSONLines.canonical(after.map { Value.object($0) } ?? .null))
            }

            // Without --step: the item's state at that point.
            let state = try await EvstoreProcess.run([
                "replay", history.path, "--item", key, "--to", "\(upTo)", "--format", "jsonl",
            ])
            #expect(state.status == 0, "\(state)")
            let stateLines = JSONLines.objects(state)
            try #require(stateLines.count == 1, "\(state)")
            if let expected = history.expectedItems(after: upTo)[key] {
                #expect(JSONLines.items(stateLines) == JSONLines.items([key: expected]))
            } else {
                #expect(JSONLines.bool(stateLines[0], "deleted") == true)
            }

            // The table names every step by its seq.
            let table = try await EvstoreProcess.run(
                ["replay", history.path, "--item", key, "--step", "--to", "\(upTo)", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(
                table.lines.filter { $0.hasPrefix("seq ") }.map { String($0.split(separator: " ")[1]) }
                    == seqs.map(String.init))
        }
    }

    @Test("replay --to SEQ --format table: a title line, then the items as an aligned table")
    func replayAsTable() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            let history = try SingleReplicaHistory(path: directory.appending("store"), count: 30, seed: 5)
            let result = try await EvstoreProcess.run(["replay", history.path, "--to", "12", "--format", "table"])
            #expect(result.status == 0, "\(result)")
            #expect(result.lines.first?.hasPrefix("items at seq 12 (12 events applied") == true, "\(result)")
            let rows = try AlignedTable(result.stdout, columns: ["collection", "id", "version", "fields"]).rows
            #expect(rows.map { "\($0[0])/\($0[1])" } == history.expectedItems(after: 12).keys.sorted())
        }
    }

    /// Reads a stamp as the tool prints it (`2026-11-22T11:22:57.001Z+3`) with integer arithmetic
    /// only: whole seconds from the calendar, milliseconds from the digits.
    static func parsePrintedStamp(_ text: String) -> (milliseconds: UInt64, logical: UInt16)? {
        let match = text.wholeMatch(of: /(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z\+(\d+)/)
        guard let match else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(
            year: Int(match.1), month: Int(match.2), day: Int(match.3), hour: Int(match.4), minute: Int(match.5),
            second: Int(match.6))
        guard let date = calendar.date(from: components), let ms = UInt64(match.7), let logical = UInt16(match.8) else {
            return nil
        }
        return (UInt64(Int64(date.timeIntervalSince1970)) * 1000 + ms, logical)
    }

    @Test("printed stamps name the exact millisecond, and replay --at accepts them")
    func printedStamps() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            // Milliseconds whose binary fraction is just below the printed digits (.001, .004, .007…).
            let history = try SingleReplicaHistory(
                path: directory.appending("store"), count: 12, seed: 13, clockStart: 1_795_346_577_000, step: 1)
            let table = try await EvstoreProcess.run(["dump", history.path, "--events", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            let rows = try AlignedTable(table.stdout, columns: ["seq", "event", "hlc", "op", "item", "fields"]).rows
            try #require(rows.count == history.events.count)
            for (row, event) in zip(rows, history.events) {
                let parsed = ReplayCommandTests.parsePrintedStamp(row[2])
                #expect(
                    parsed?.milliseconds == event.hlc.rawValue >> 16
                        && parsed?.logical == UInt16(event.hlc.rawValue & 0xFFFF),
                    "seq \(event.seq): printed \(row[2]) for physical \(event.hlc.rawValue >> 16) ms, logical \(event.hlc.rawValue & 0xFFFF)"
                )
            }
            // Each stamp as the table printed it replays to just after its event.
            for (index, (row, event)) in zip(rows, history.events).enumerated() {
                let byText = try await EvstoreProcess.run(["replay", history.path, "--at", row[2], "--format", "jsonl"])
                #expect(byText.status == 0, "\(byText)")
                #expect(
                    JSONLines.items(JSONLines.objects(byText))
                        == JSONLines.items(history.expectedItems(after: index + 1)),
                    "replay --at \(row[2]) (the stamp of seq \(event.seq), raw \(event.hlc.rawValue))")
            }
            // explain prints the same exact stamps.
            let key = "\(history.changes[0].collection)/\(history.changes[0].item)"
            let explain = try await EvstoreProcess.run(["explain", history.path, "--item", key, "--format", "table"])
            #expect(explain.status == 0, "\(explain)")
            let stamps = explain.stdout.matches(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\+\d+/).map {
                String($0.output)
            }
            #expect(!stamps.isEmpty, "\(explain)")
            let known = Set(history.events.map { "\($0.hlc.rawValue >> 16)+\($0.hlc.rawValue & 0xFFFF)" })
            for stamp in stamps {
                let parsed = ReplayCommandTests.parsePrintedStamp(stamp)
                #expect(
                    parsed.map { known.contains("\($0.milliseconds)+\($0.logical)") } == true,
                    "explain printed \(stamp)")
            }
        }
    }

    @Test("two replicas: --to follows each log's order, --at the stamps, so --at agrees across replicas")
    func replayAcrossReplicas() async throws {
        try await withTemporaryDirectory(prefix: "evstore-replay") { directory in
            let fixture = try MixedStore(in: directory)
            // A's log: 7 = A's patch, 8 = B's; B's log: 7 = B's patch, 8 = A's.
            func content(_ path: String, _ arguments: [String]) async throws -> String? {
                let result = try await EvstoreProcess.run(
                    ["replay", path, "--item", "notes/n1", "--format", "jsonl"] + arguments)
                #expect(result.status == 0, "\(result)")
                return JSONLines.objects(result).first.flatMap { JSONLines.object($0, "fields") }.flatMap {
                    JSONLines.string($0, "content")
                }
            }
            #expect(try await content(fixture.path, ["--to", "6"]) == "hello world")
            #expect(try await content(fixture.path, ["--to", "7"]) == "edited on A")
            #expect(try await content(fixture.otherPath, ["--to", "7"]) == "edited on B")
            // B's stamp is the later one: at A's stamp only A's edit is in, on both replicas.
            let stampA = try #require(
                fixture.events.first { $0.id.origin == MixedStore.replicaA && $0.fields["content"] == "edited on A" }
            ).hlc
            for path in [fixture.path, fixture.otherPath] {
                #expect(try await content(path, ["--at", "\(stampA.rawValue)"]) == "edited on A")
                #expect(try await content(path, ["--to", "8"]) == "edited on B")
            }
            let stepped = try await EvstoreProcess.run(
                ["replay", fixture.otherPath, "--item", "notes/n1", "--step", "--format", "jsonl"])
            let last = try #require(JSONLines.objects(stepped).last)
            let change = try #require((last["changes"] as? [[String: Any]])?.first)
            #expect(
                JSONLines.string(change, "outcome") == "lost", "A's write arrives at B after B's later one: \(stepped)")
            #expect(
                JSONLines.object(change, "lost_to").flatMap { JSONLines.string($0, "origin") }
                    == MixedStore.replicaB.description)
        }
    }
}
