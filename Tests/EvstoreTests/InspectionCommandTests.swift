import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore search`, `evstore stats`, and the store as `mdb_stat` (lmdb-utils) sees it.
@Suite("evstore search and stats")
struct InspectionCommandTests {
    @Test("search --format jsonl: a Korean query finds the Korean item; deleted items are not found")
    func search() async throws {
        try await withTemporaryDirectory(prefix: "evstore-inspect") { directory in
            let fixture = try MixedStore(in: directory)
            let korean = try await EvstoreProcess.run(["search", fixture.path, "동기화", "--format", "jsonl"])
            #expect(korean.status == 0, "\(korean)")
            let hits = JSONLines.objects(korean)
            #expect(hits.count == 1, "\(korean)")
            let hit = try #require(hits.first)
            #expect(JSONLines.keys(hit) == ["collection", "fields", "highlights", "id", "score", "typos"])
            #expect(JSONLines.canonical(hit["highlights"]) == "{}", "no snippets unless asked")
            #expect(JSONLines.string(hit, "collection") == "notes")
            #expect(JSONLines.string(hit, "id") == "n3")
            #expect(((hit["score"] as? NSNumber)?.doubleValue ?? 0) > 0)
            #expect(
                JSONLines.canonical(hit["fields"]) == JSONLines.canonical(fields: MixedStore.expectedItems["notes/n3"]!)
            )

            let cases: [([String], [String])] = [
                (["milk"], ["tasks/t1"]),
                (["mil"], ["tasks/t1"]),  // the last word also matches as a prefix
                (["edited on"], ["notes/n1"]),
                (["second"], []),  // n2 was deleted
                (["hello"], []),  // n1's content was overwritten
                (["테스트"], ["notes/n3"]),
                (["동기화", "--collection", "tasks"], []),
                (["note", "--tag", "회의"], []),
                (["회의", "--tag", "회의"], ["notes/n3"]),
                (["editd"], ["notes/n1"]),  // a typo: "edited" is one edit away
                (["editd", "--typos", "off"], []),
            ]
            for (arguments, expected) in cases {
                let result = try await EvstoreProcess.run(
                    ["search", fixture.path] + arguments + ["--format", "jsonl"])
                #expect(result.status == 0, "\(result)")
                let found = JSONLines.objects(result).map {
                    "\(JSONLines.string($0, "collection") ?? "")/\(JSONLines.string($0, "id") ?? "")"
                }
                #expect(found == expected, "search \(arguments)")
            }
            let bad = try await EvstoreProcess.run(["search", fixture.path, "x", "--typos", "sometimes"])
            #expect(bad.status == 64 && bad.stderr.contains("--typos must be auto, on or off"), "\(bad)")
            let table = try await EvstoreProcess.run(["search", fixture.path, "동기화", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.stdout.contains("notes/n3") && table.stdout.contains("동기화 회의"), "\(table)")
        }
    }

    @Test("search --snippets --facets: the matched ranges and marked snippets, then the facets and total")
    func snippetsAndFacets() async throws {
        try await withTemporaryDirectory(prefix: "evstore-inspect") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(
                ["search", fixture.path, "동기화", "--snippets", "--facets", "tags", "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            try #require(lines.count == 2, "one result, then the facets: \(result)")
            let highlights = try #require(JSONLines.object(lines[0], "highlights"))
            let content = try #require(JSONLines.object(highlights, "content"))
            #expect(JSONLines.string(content, "marked") == "오프라인에서 <b>동기화</b>를 테스트했다")
            // 오프라인에서 is 18 bytes of UTF-8, and a space: 동기화 spans bytes 19 to 28.
            #expect(JSONLines.canonical(content["ranges"]) == "[[19,28]]")
            #expect(JSONLines.canonical(lines[1]) == #"{"facets":{"tags":[{"count":1,"value":"회의"}]},"total":1}"#)

            let table = try await EvstoreProcess.run(
                [
                    "search", fixture.path, "동기화", "--snippets", "--facets", "tags", "--where", "tags == null",
                    "--format",
                    "table",
                ])
            #expect(table.status == 0, "\(table)")
            #expect(table.stdout.contains("0 hits") && table.stdout.contains("tags: (none)"), "\(table)")
            let bad = try await EvstoreProcess.run(["search", fixture.path, "x", "--where", "tags ~~ 1"])
            #expect(bad.status != 0 && bad.stderr.contains("unknown operator"), "\(bad)")
        }
    }

    @Test("stats --format jsonl: counts per collection, conflicts, and one line per named database")
    func stats() async throws {
        try await withTemporaryDirectory(prefix: "evstore-inspect") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["stats", fixture.path, "--format", "jsonl"])
            #expect(result.status == 0, "\(result)")
            let lines = JSONLines.objects(result)
            let summary = try #require(lines.first)
            #expect(JSONLines.int(summary, "events") == 8)
            #expect(JSONLines.int(summary, "conflicts") == 1)
            #expect(JSONLines.canonical(summary["items"]) == #"{"notes":2,"tasks":1}"#)
            #expect(JSONLines.int(summary, "generation") == 0)
            #expect((JSONLines.int(summary, "page_size") ?? 0) >= 4096)
            #expect((JSONLines.int(summary, "used_bytes") ?? 0) > 0)
            var databases: [String: Int] = [:]
            for line in lines.dropFirst() {
                if let name = JSONLines.string(line, "database") { databases[name] = JSONLines.int(line, "entries") }
            }
            #expect(databases["events"] == 8)
            #expect(databases["event_ids"] == 8)
            #expect(
                databases["g0.items"] == 4,
                "three items and the deleted n2's tombstone (their histories are in their records)")
            #expect(databases["g0.conflicts"] == 1)
            #expect(databases["meta"] != nil)

            let table = try await EvstoreProcess.run(["stats", fixture.path, "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.lines.contains { $0.hasPrefix("events") && $0.hasSuffix(" 8") }, "\(table)")
        }
    }

    @Test("mdb_stat -a STORE (lmdb-utils) reads the store and lists its named databases")
    func mdbStat() async throws {
        let tool = ["/usr/bin/mdb_stat", "/usr/local/bin/mdb_stat", "/opt/homebrew/bin/mdb_stat"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(tool != nil, "mdb_stat (lmdb-utils) is installed")
        try await withTemporaryDirectory(prefix: "evstore-inspect") { directory in
            let fixture = try MixedStore(in: directory)
            let result = try await EvstoreProcess.run(["-a", fixture.path], executable: tool!)
            #expect(result.status == 0, "\(result)")
            for name in ["events", "event_ids", "meta", "g0.items", "g0.search_segments"] {
                #expect(result.stdout.contains("Status of \(name)"), "mdb_stat lists \(name)")
            }
        }
    }

    @Test("mdb_dump -s meta -p STORE (lmdb-utils) prints the metadata database")
    func mdbDump() async throws {
        let tool = ["/usr/bin/mdb_dump", "/usr/local/bin/mdb_dump", "/opt/homebrew/bin/mdb_dump"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        try #require(tool != nil, "mdb_dump (lmdb-utils) is installed")
        try await withTemporaryDirectory(prefix: "evstore-inspect") { directory in
            let fixture = try MixedStore(in: directory)
            let meta = try await EvstoreProcess.run(["-s", "meta", "-p", fixture.path], executable: tool!)
            #expect(meta.status == 0, "\(meta)")
            #expect(
                meta.stdout.contains("store.replica"), "the metadata keys are printable: \(meta.stdout.prefix(400))")
            let events = try await EvstoreProcess.run(["-s", "events", fixture.path], executable: tool!)
            #expect(events.status == 0, "\(events)")
            // Eight events: eight key lines of 8-byte big-endian seqs (16 hex digits) in the data section.
            let keys = events.lines.filter { $0.hasPrefix(" 00000000000000") && $0.count == 17 }
            #expect(keys.count == 8, "\(events.stdout.prefix(400))")
        }
    }
}
