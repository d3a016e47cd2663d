import EventStore
import EventStoreTestSupport
import EventSync
import EventSyncService
import Foundation
import Testing

/// `evstore dump`: every section in both formats, and the filters, on a store written by two
/// replicas with a real conflict (``MixedStore``).
@Suite("evstore dump")
struct DumpCommandTests {
    @Test("--events --format jsonl prints every event with stable names and the values written")
    func eventsAsJSONLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["dump", fixture.path, "--events", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            try #require(lines.count == 8, "\(result)")
            let changes = MixedStore.sharedChanges + [MixedStore.changeOnA, MixedStore.changeOnB]
            var previousHLC: UInt64 = 0
            for (index, (line, change)) in zip(lines, changes).enumerated() {
                #expect(
                    JSONLines.keys(line) == [
                        "base", "collection", "fields", "hlc", "id", "item", "op", "schema", "seq",
                    ])
                #expect(JSONLines.int(line, "seq") == index + 1)
                #expect(JSONLines.string(line, "collection") == change.collection)
                #expect(JSONLines.string(line, "item") == change.item)
                #expect(JSONLines.string(line, "op") == change.operation.description)
                #expect(JSONLines.canonical(line["fields"]) == JSONLines.canonical(fields: change.fields))
                #expect(JSONLines.int(line, "schema") == 0)
                let id = try #require(JSONLines.object(line, "id"))
                let fromB = index == 7
                #expect(JSONLines.keys(id) == ["origin", "seq"])
                #expect(
                    JSONLines.string(id, "origin") == (fromB ? MixedStore.replicaB : MixedStore.replicaA).description)
                #expect(JSONLines.int(id, "seq") == (fromB ? 1 : index + 1))
                let hlc = try #require(JSONLines.string(line, "hlc").flatMap { UInt64($0) }, "hlc is a decimal string")
                #expect(hlc == fixture.events[index].hlc.rawValue)
                #expect(hlc > previousHLC, "one replica's stamps increase")
                previousHLC = hlc
            }
        }
    }

    @Test("without --format, piped output is JSON lines")
    func pipedOutputDefaultsToJSONLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["dump", fixture.path])
            #expect(result.status == 0, "\(result)")
            #expect(JSONLines.objects(result).compactMap { JSONLines.int($0, "seq") } == Array(1...8))
        }
    }

    @Test("--items --format jsonl prints the merged items with their versions")
    func itemsAsJSONLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            for path in [fixture.path, fixture.otherPath] {
                let result = try await EvstoreProcess.run(["dump", path, "--items", "--format", "jsonl"])
                #expect(result.status == 0, "\(result)")
                let lines = JSONLines.objects(result)
                #expect(
                    lines.map(JSONLines.keys) == Array(repeating: ["collection", "fields", "id", "version"], count: 3))
                #expect(
                    lines.map { "\(JSONLines.string($0, "collection") ?? "")/\(JSONLines.string($0, "id") ?? "")" }
                        == ["notes/n1", "notes/n3", "tasks/t1"])
                var expected: [String: ExpectedItem] = [:]
                for (key, fields) in MixedStore.expectedItems {
                    let parts = key.split(separator: "/").map(String.init)
                    expected[key] = ExpectedItem(
                        collection: parts[0], id: parts[1], fields: fields,
                        version: try #require(fixture.version(of: key)))
                }
                #expect(JSONLines.items(lines) == JSONLines.items(expected))
            }
        }
    }

    @Test("--conflicts --format jsonl names the winner and the loser of the concurrent edit")
    func conflictsAsJSONLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            for path in [fixture.path, fixture.otherPath] {
                let result = try await EvstoreProcess.run(["dump", path, "--conflicts", "--format", "jsonl"])
                #expect(result.status == 0, "\(result)")
                let lines = JSONLines.objects(result)
                try #require(lines.count == 1, "\(result)")
                let record = lines[0]
                #expect(JSONLines.keys(record) == ["collection", "field", "item", "loser", "seq", "winner"])
                #expect(JSONLines.string(record, "collection") == "notes")
                #expect(JSONLines.string(record, "item") == "n1")
                #expect(JSONLines.string(record, "field") == "content")
                #expect(JSONLines.int(record, "seq") == 8, "the conflict is met when the second write arrives")
                let winner = try #require(JSONLines.object(record, "winner"))
                let loser = try #require(JSONLines.object(record, "loser"))
                #expect(JSONLines.keys(winner) == ["cleared", "event", "hlc", "value"])
                #expect(JSONLines.string(winner, "value") == "edited on B")
                #expect(JSONLines.bool(winner, "cleared") == false)
                #expect(
                    JSONLines.object(winner, "event").flatMap { JSONLines.string($0, "origin") }
                        == MixedStore.replicaB.description)
                #expect(JSONLines.string(loser, "value") == "edited on A")
                #expect(
                    JSONLines.object(loser, "event").flatMap { JSONLines.string($0, "origin") }
                        == MixedStore.replicaA.description)
                let winnerHLC = try #require(JSONLines.string(winner, "hlc").flatMap { UInt64($0) })
                let loserHLC = try #require(JSONLines.string(loser, "hlc").flatMap { UInt64($0) })
                #expect(winnerHLC > loserHLC)
            }
        }
    }

    @Test("--terms --format jsonl lists the current search terms per collection")
    func termsAsJSONLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let notes = try await EvstoreProcess.run([
                "dump", fixture.path, "--terms", "--collection", "notes", "--format", "jsonl",
            ])
            #expect(notes.status == 0, "\(notes)")
            let lines = JSONLines.objects(notes)
            #expect(!lines.isEmpty)
            #expect(lines.allSatisfy { JSONLines.keys($0) == ["collection", "items", "term"] })
            #expect(lines.allSatisfy { JSONLines.string($0, "collection") == "notes" })
            var terms: [String: Int] = [:]
            for line in lines { terms[JSONLines.string(line, "term") ?? ""] = JSONLines.int(line, "items") }
            #expect(terms["first"] == 1)
            #expect(terms["edited"] == 1)
            #expect(terms["동기"] == 1, "Korean is indexed as bigrams")
            #expect(terms["#회의"] == 1, "tags are indexed as #tag")
            #expect(terms["hello"] == nil, "n1's content was overwritten")
            #expect(terms["second"] == nil, "n2 was deleted")
            #expect(terms["milk"] == nil, "tasks are another collection")

            let all = try await EvstoreProcess.run(["dump", fixture.path, "--terms", "--format", "jsonl"])
            #expect(all.status == 0, "\(all)")
            let milk = JSONLines.objects(all).filter { JSONLines.string($0, "term") == "milk" }
            #expect(milk.count == 1)
            #expect(milk.first.flatMap { JSONLines.string($0, "collection") } == "tasks")

            let limited = try await EvstoreProcess.run([
                "dump", fixture.path, "--terms", "--limit", "3", "--format", "jsonl",
            ])
            #expect(JSONLines.objects(limited).count == 3)
        }
    }

    @Test("--meta --format jsonl decodes the replica, the format, the generation and the checkpoint")
    func metaAsJSONLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["dump", fixture.path, "--meta", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.isEmpty, "\(result)")
            let lines = JSONLines.objects(result)
            #expect(
                lines.allSatisfy { JSONLines.keys($0) == ["about", "database", "key", "text", "value"] }, "\(result)")
            var meta: [String: [String: Any]] = [:]
            for line in lines {
                meta["\(JSONLines.string(line, "database") ?? "")/\(JSONLines.string(line, "key") ?? "")"] = line
            }
            #expect(
                meta["meta/store.replica"].flatMap { JSONLines.string($0, "value") } == MixedStore.replicaA.description)
            #expect(meta["meta/store.generation"].flatMap { JSONLines.int($0, "value") } == 0)
            #expect(meta["meta/store.format"].flatMap { JSONLines.int($0, "value") } == 7)
            #expect(meta["meta/store.origin-seq"].flatMap { JSONLines.int($0, "value") } == 7, "A gave seven events")
            #expect(
                meta["meta/store.hlc"].flatMap { JSONLines.string($0, "value") }
                    == String(fixture.events[7].hlc.rawValue))
            #expect(meta["g0.state/applied-through"].flatMap { JSONLines.int($0, "value") } == 8)
            let configuration = try #require(meta["meta/store.configuration"].flatMap { JSONLines.object($0, "value") })
            #expect(
                JSONLines.keys(configuration) == [
                    "collections", "defaultFields", "projections", "tagField", "tokenizer",
                ])
            #expect(JSONLines.string(configuration, "tagField") == "tags")
            #expect(
                (configuration["defaultFields"] as? [[String: Any]])?.compactMap { JSONLines.string($0, "name") } == [
                    "content", "tags", "title",
                ])
            #expect(
                meta["meta/store.configuration"].flatMap { JSONLines.string($0, "text") }
                    == "search content×1 tags×2 title×3; tags from tags; tokenizer 2")

            let table = try await EvstoreProcess.run(["dump", fixture.path, "--meta", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            let rows = try AlignedTable(table.stdout, columns: ["database", "key", "value", "meaning"]).rows
            #expect(rows.contains { $0[1] == "store.replica" && $0[2] == MixedStore.replicaA.description })
        }
    }

    @Test("--meta of a sync server's store names the key that signs its marks, and does not show it")
    func metaOfAServerStoreHidesTheEpochKey() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let service = try SyncService(configuration: .init(dataDirectory: directory.appending("server")))
            let replica = try Store.open(at: directory.appending("replica"))
            defer { replica.close() }
            try await replica.put("notes", id: "n1", fields: ["title": "one"])
            _ = try await service.push(
                store: "notes", PushRequest(replica: replica.replicaID, events: try allEvents(of: replica)))
            service.close()
            let path = directory.appending("server/notes")
            var readOnly = Store.Configuration()
            readOnly.readOnly = true
            let key = try Store.open(at: path, configuration: readOnly).read { reader in
                try #require(try reader.metadata(forKey: "sync.epoch-key"))
            }
            #expect(key.count == 16)
            let hex = key.map { String(format: "%02x", $0) }.joined()
            for format in ["jsonl", "table"] {
                let result = try await EvstoreProcess.run(["dump", path, "--meta", "--format", format])
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.contains("sync.epoch-key") && result.stdout.contains("not shown"), "\(result)")
                #expect(!result.stdout.lowercased().contains(hex), "the key is not printed")
            }
        }
    }

    @Test("--format table: a header, a rule and one aligned row per event")
    func eventsAsTable() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["dump", fixture.path, "--events", "--format", "table"])
            #expect(result.status == 0, "\(result)")
            let table = try AlignedTable(result.stdout, columns: ["seq", "event", "hlc", "op", "item", "fields"])
            try #require(table.rows.count == 8)
            let changes = MixedStore.sharedChanges + [MixedStore.changeOnA, MixedStore.changeOnB]
            for (index, (row, change)) in zip(table.rows, changes).enumerated() {
                #expect(row[0] == "\(index + 1)")
                #expect(row[1] == (index == 7 ? "b2b2b2b2/1" : "a1a1a1a1/\(index + 1)"))
                #expect(row[3] == change.operation.description)
                #expect(row[4] == "\(change.collection)/\(change.item)")
            }
            #expect(table.rows[0][5] == #"content="hello world" rank=1 title="First note""#)
            #expect(table.rows[4][5] == "", "a delete sets no fields")
        }
    }

    @Test("--items --format table: aligned rows, fields as name=value in name order")
    func itemsAsTable() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["dump", fixture.path, "--items", "--format", "table"])
            #expect(result.status == 0, "\(result)")
            let table = try AlignedTable(result.stdout, columns: ["collection", "id", "version", "fields"])
            #expect(table.rows.map { "\($0[0])/\($0[1])" } == ["notes/n1", "notes/n3", "tasks/t1"])
            #expect(table.rows.first?[3] == #"content="edited on B" rank=1 title="First note, edited""#)
            #expect(table.rows.last?[3] == #"done=false tags=["home"] title="Buy milk" weight=1.25"#)
            #expect(table.rows[1][3].hasPrefix(#"content="오프라인에서"#))
        }
    }

    /// A filter and the event seqs it must select from ``MixedStore``'s log.
    struct EventFilter: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var seqs: [Int]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test(
        "event filters select the right events",
        arguments: [
            EventFilter(arguments: ["--from", "2", "--to", "4"], seqs: [2, 3, 4]),
            EventFilter(arguments: ["--from", "7"], seqs: [7, 8]),
            EventFilter(arguments: ["--to", "1"], seqs: [1]),
            EventFilter(arguments: ["--collection", "tasks"], seqs: [3]),
            EventFilter(arguments: ["--item", "notes/n1"], seqs: [1, 4, 7, 8]),
            EventFilter(arguments: ["--item", "n1", "--collection", "notes"], seqs: [1, 4, 7, 8]),
            EventFilter(arguments: ["--item", "n1"], seqs: [1, 4, 7, 8]),
            EventFilter(arguments: ["--item", "notes/n1", "--from", "5"], seqs: [7, 8]),
            EventFilter(arguments: ["--item", "notes/n2"], seqs: [2, 5]),
            EventFilter(arguments: ["--origin", "b2b2"], seqs: [8]),
            EventFilter(arguments: ["--origin", "A1A1A1"], seqs: [1, 2, 3, 4, 5, 6, 7]),
            EventFilter(arguments: ["--origin", "a1a1", "--collection", "notes", "--from", "3"], seqs: [4, 5, 6, 7]),
            EventFilter(arguments: ["--limit", "3"], seqs: [1, 2, 3]),
            EventFilter(arguments: ["--collection", "notes", "--limit", "2"], seqs: [1, 2]),
            EventFilter(arguments: ["--item", "notes/n1", "--limit", "3"], seqs: [1, 4, 7]),
            EventFilter(arguments: ["--limit", "0"], seqs: []),
            EventFilter(arguments: ["--origin", "ffff"], seqs: []),
        ])
    func eventFilters(_ filter: EventFilter) async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(
                ["dump", fixture.path, "--events", "--format", "jsonl"] + filter.arguments)
            #expect(result.status == 0, "\(result)")
            #expect(JSONLines.objects(result).compactMap { JSONLines.int($0, "seq") } == filter.seqs)
            let table = try await EvstoreProcess.run(
                ["dump", fixture.path, "--events", "--format", "table"] + filter.arguments)
            #expect(table.status == 0, "\(table)")
            #expect(
                try AlignedTable(table.stdout, columns: ["seq", "event", "hlc", "op", "item", "fields"]).rows.map {
                    $0[0]
                }
                    == filter.seqs.map(String.init))
        }
    }

    @Test("item and conflict filters select the right records")
    func itemAndConflictFilters() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let cases: [([String], [String])] = [
                (["--items", "--collection", "tasks"], ["tasks/t1"]),
                (["--items", "--item", "notes/n3"], ["notes/n3"]),
                (["--items", "--item", "n3"], ["notes/n3"]),
                (["--items", "--item", "notes/n2"], []),
                (["--items", "--limit", "2"], ["notes/n1", "notes/n3"]),
                (["--conflicts", "--item", "notes/n1"], ["notes/n1"]),
                (["--conflicts", "--item", "notes/n3"], []),
                (["--conflicts", "--collection", "tasks"], []),
                (["--conflicts", "--from", "8"], ["notes/n1"]),
                (["--conflicts", "--to", "7"], []),
                (["--conflicts", "--origin", String(MixedStore.replicaB.description.prefix(6))], ["notes/n1"]),
                (["--conflicts", "--origin", "ffffffff"], []),
            ]
            for (arguments, expected) in cases {
                let result = try await EvstoreProcess.run(["dump", fixture.path, "--format", "jsonl"] + arguments)
                #expect(result.status == 0, "\(result)")
                let keys = JSONLines.objects(result).map {
                    "\(JSONLines.string($0, "collection") ?? "")/\(JSONLines.string($0, "id") ?? JSONLines.string($0, "item") ?? "")"
                }
                #expect(keys == expected, "\(arguments)")
            }
        }
    }

    @Test(
        "a filter the section would ignore is a usage error (exit 64) naming the sections it applies to",
        arguments: [
            ["--items", "--origin", "ab"], ["--items", "--from", "3"], ["--terms", "--item", "notes/n1"],
            ["--meta", "--collection", "notes"], ["--meta", "--to", "3"],
        ])
    func ignoredFiltersAreUsageErrors(arguments: [String]) async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["dump", fixture.path] + arguments)
            #expect(result.status == 64, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(
                result.stderr.contains("does not apply to \(arguments[0])") && result.stderr.contains("only to --"),
                "\(result)")
        }
    }

    @Test("tables stay aligned with Korean ids (wide characters) in the middle columns")
    func wideCharacters() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let path = directory.appending("store")
            try withStore(at: path) { store in
                _ = try store.append([
                    .put("memo", id: "회의-1", fields: ["title": "동기화 회의", "n": 1]),
                    .put("memo", id: "a", fields: ["title": "short"]),
                    .put("notes", id: "긴-아이디-입니다", fields: ["title": "wide id"]),
                ])
            }
            let items = try await EvstoreProcess.run(["dump", path, "--items", "--format", "table"])
            #expect(items.status == 0, "\(items)")
            let rows = try AlignedTable(items.stdout, columns: ["collection", "id", "version", "fields"]).rows
            #expect(rows.map { "\($0[0])/\($0[1])" } == ["memo/a", "memo/회의-1", "notes/긴-아이디-입니다"], "byte order")
            let events = try await EvstoreProcess.run(["dump", path, "--events", "--format", "table"])
            #expect(events.status == 0, "\(events)")
            let eventRows = try AlignedTable(events.stdout, columns: ["seq", "event", "hlc", "op", "item", "fields"])
                .rows
            #expect(eventRows.map { $0[4] } == ["memo/회의-1", "memo/a", "notes/긴-아이디-입니다"])
        }
    }

    @Test("an id that holds a slash: --item COLLECTION/ID splits at the collection")
    func idWithSlash() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let path = directory.appending("store")
            try withStore(at: path) { store in
                _ = try store.append([
                    .put("notes", id: "2026/11/22", fields: ["title": "diary"]),
                    .put("notes", id: "2026", fields: ["title": "year"]),
                ])
            }
            for arguments in [["--item", "notes/2026/11/22"], ["--item", "2026/11/22", "--collection", "notes"]] {
                let result = try await EvstoreProcess.run(["dump", path, "--items", "--format", "jsonl"] + arguments)
                #expect(result.status == 0, "\(result)")
                #expect(
                    JSONLines.objects(result).compactMap { JSONLines.string($0, "id") } == ["2026/11/22"],
                    "\(arguments)")
            }
        }
    }

    @Test("an empty store: every section prints nothing and exits 0; so do stats and replay")
    func emptyStore() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let path = directory.appending("store")
            try withStore(at: path) { _ in }
            for section in ["--events", "--items", "--terms", "--conflicts"] {
                let result = try await EvstoreProcess.run(["dump", path, section, "--format", "jsonl"])
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.isEmpty, "\(section): \(result)")
            }
            let stats = try await EvstoreProcess.run(["stats", path, "--format", "jsonl"])
            #expect(stats.status == 0, "\(stats)")
            #expect(JSONLines.objects(stats).first.flatMap { JSONLines.int($0, "events") } == 0)
            let replay = try await EvstoreProcess.run(["replay", path, "--format", "jsonl"])
            #expect(replay.status == 0 && replay.stdout.isEmpty, "\(replay)")
        }
    }

    @Test("a relative store path works from the current directory")
    func relativePath() async throws {
        try await withTemporaryDirectory(prefix: "evstore-dump") { directory in
            let fixture = try MixedStore(in: directory)
            let relative = try await EvstoreProcess.run(
                ["dump", "./replica-a/", "--items", "--format", "jsonl"], currentDirectory: directory.path)
            let absolute = try await EvstoreProcess.run(["dump", fixture.path, "--items", "--format", "jsonl"])
            #expect(relative.status == 0, "\(relative)")
            #expect(relative.stdout == absolute.stdout && !absolute.stdout.isEmpty)
        }
    }
}
