import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// `evstore export` and `evstore import`: a round trip through JSON Lines reproduces the store;
/// change lines are stamped by the importing replica; a bad line fails the whole import, names
/// the line, and leaves the target store as it was.
@Suite("evstore export and import")
struct TransferCommandTests {
    @Test("export | import into a new store reproduces identical events, items and conflicts")
    func roundTrip() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let fixture = try MixedStore(in: directory)
            let copy = directory.appending("copy")
            let export = try await EvstoreProcess.run(["export", fixture.path])
            #expect(export.status == 0, "\(export)")
            #expect(export.lines.count == 8)
            let exported = JSONLines.objects(export)
            #expect(exported.compactMap { JSONLines.int($0, "seq") } == Array(1...8))

            let imported = try await EvstoreProcess.run(["import", copy, "-"], stdin: Data(export.stdout.utf8))
            #expect(imported.status == 0, "\(imported)")
            #expect(imported.stdout.contains("imported 0 changes and 8 events"), "\(imported)")

            for section in ["--items", "--conflicts", "--events"] {
                let original = try await EvstoreProcess.run(["dump", fixture.path, section, "--format", "jsonl"])
                let reproduced = try await EvstoreProcess.run(["dump", copy, section, "--format", "jsonl"])
                #expect(original.status == 0 && reproduced.status == 0, "\(original)\n\(reproduced)")
                #expect(!original.stdout.isEmpty)
                #expect(reproduced.stdout == original.stdout, "dump \(section) of the copy")
            }
            let exportAgain = try await EvstoreProcess.run(["export", copy])
            #expect(exportAgain.stdout == export.stdout, "origins, stamps and bases are kept")
            let verify = try await EvstoreProcess.run(["verify", copy, "--format", "jsonl"])
            #expect(verify.status == 0, "\(verify)")

            // Importing the same events again changes nothing.
            let twice = try await EvstoreProcess.run(["import", copy, "-"], stdin: Data(export.stdout.utf8))
            #expect(twice.status == 0, "\(twice)")
            #expect(twice.stdout.contains("imported 0 changes and 0 events"), "\(twice)")
            let exportThird = try await EvstoreProcess.run(["export", copy])
            #expect(exportThird.stdout == export.stdout)

            // --from/--to export a part of the log.
            let part = try await EvstoreProcess.run(["export", fixture.path, "--from", "3", "--to", "5"])
            #expect(part.status == 0, "\(part)")
            #expect(part.lines == Array(export.lines[2...4]))
        }
    }

    @Test("change lines: put, patch and delete, stamped by the importing replica, from a file")
    func changeLines() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let target = directory.appending("store")
            let changes: [Change] = [
                .put("notes", id: "x1", fields: ["title": "One", "n": 1, "tags": ["a", "b"]]),
                .patch("notes", id: "x1", fields: ["n": 2, "done": true]),
                .put("notes", id: "x2", fields: ["title": "Two"]),
                .delete("notes", id: "x2"),
                .patch("tasks", id: "y1", fields: ["title": "할 일", "weight": 0.5]),
                .put("notes", id: "x1", fields: ["title": "One again"]),
            ]
            var text = ""
            for change in changes {
                var members: [String: Value] = [
                    "collection": .string(change.collection), "id": .string(change.item),
                    "op": .string(change.operation.description),
                ]
                if change.operation != .delete { members["fields"] = .object(change.fields) }
                text += JSONLines.canonical(Value.object(members)) + "\n"
                if change.operation == .delete { text += "   \n" }  // blank lines are skipped
            }
            let file = directory.appending("changes.jsonl")
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))

            let result = try await EvstoreProcess.run(["import", target, file])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("imported 6 changes and 0 events"), "\(result)")

            let events = JSONLines.objects(
                try await EvstoreProcess.run(["dump", target, "--events", "--format", "jsonl"]))
            try #require(events.count == changes.count)
            let origins = Set(
                events.compactMap { JSONLines.object($0, "id").flatMap { JSONLines.string($0, "origin") } })
            #expect(origins.count == 1, "one replica stamped every change")
            let stamps = events.compactMap {
                JSONLines.string($0, "hlc").flatMap(UInt64.init).map(HLCTimestamp.init(rawValue:))
            }
            #expect(stamps == stamps.sorted() && Set(stamps).count == changes.count)
            let expected = foldWrites(Array(zip(changes, stamps)))
            let items = try await EvstoreProcess.run(["dump", target, "--items", "--format", "jsonl"])
            #expect(JSONLines.items(JSONLines.objects(items)) == JSONLines.items(expected))
            #expect(Set(expected.keys) == ["notes/x1", "tasks/y1"])
        }
    }

    /// A bad input and what the error must name.
    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var lines: [String]
        var blamed: String
        var testDescription: String { name }
    }

    /// An event line as `export` writes it, with `extra` members appended to the event and
    /// `idExtra` to its id.
    static func exported(extra: String, idExtra: String = "") -> String {
        #"{"base":"0","collection":"notes","fields":{"title":"imported"},"hlc":"117673366887006208","#
            + #""id":{"origin":"0123456789abcdef0123456789abcdef","seq":1\#(idExtra)},"item":"e1","op":"put","schema":0,"seq":1\#(extra)}"#
    }

    static let good1 = #"{"collection": "notes", "id": "new1", "op": "put", "fields": {"title": "ok"}}"#
    static let good2 = #"{"collection": "notes", "id": "n1", "op": "patch", "fields": {"title": "overwritten?"}}"#

    @Test(
        "a bad line fails the import (exit 1, names the line) and the store is unchanged",
        arguments: [
            BadInput(
                name: "truncated JSON",
                lines: [good1, good2, #"{"collection": "notes", "id": "x", "op": "put", "fields": {"#], blamed: "line 3"
            ),
            BadInput(name: "not JSON", lines: [good1, "hello there", good2], blamed: "line 2"),
            BadInput(name: "an array", lines: ["[1, 2]", good1], blamed: "line 1"),
            BadInput(
                name: "unknown op",
                lines: [good1, good2, good1, #"{"collection": "notes", "id": "x", "op": "upsert", "fields": {}}"#],
                blamed: "line 4"),
            BadInput(
                name: "no collection", lines: [good1, #"{"id": "x", "op": "put", "fields": {"a": 1}}"#],
                blamed: "line 2"),
            BadInput(
                name: "fields not an object",
                lines: [good1, #"{"collection": "notes", "id": "x", "op": "put", "fields": [1]}"#], blamed: "line 2"),
            BadInput(
                name: "empty collection name",
                lines: [good1, good2, #"{"collection": "", "id": "x", "op": "put", "fields": {"a": 1}}"#],
                blamed: "line 3"),
            BadInput(
                name: "patch without fields",
                lines: [good1, #"{"collection": "notes", "id": "x", "op": "patch", "fields": {}}"#], blamed: "line 2"),
            BadInput(
                name: "a misspelt key",
                lines: [
                    good1, good2, #"{"collection": "notes", "id": "n9", "op": "put", "feilds": {"title": "lost"}}"#,
                ],
                blamed: #"line 3: unknown key "feilds""#),
            BadInput(
                name: "an integer beyond Int64",
                lines: [
                    good1,
                    #"{"collection": "notes", "id": "x", "op": "put", "fields": {"count": 9223372036854775808}}"#,
                ],
                blamed: "line 2: invalid JSON: integer 9223372036854775808 does not fit in 64 bits at fields.count"),
            BadInput(
                name: "an integer below Int64",
                lines: [
                    #"{"collection": "notes", "id": "x", "op": "put", "fields": {"list": [1, -9223372036854775809]}}"#
                ],
                blamed: "line 1: invalid JSON: integer -9223372036854775809 does not fit in 64 bits at fields.list[1]"),
            BadInput(
                name: "an unknown key in an event", lines: [good1, exported(extra: #","colour":"red""#)],
                blamed: #"line 2: not an event: unknown key "colour""#),
            BadInput(
                name: "an unknown key in an event id", lines: [exported(extra: "", idExtra: #","sequence":1"#), good1],
                blamed: #"line 1: not an event: unknown key "id.sequence""#),
        ])
    func badLine(_ input: BadInput) async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let fixture = try MixedStore(in: directory)
            let before = try await EvstoreProcess.run(["export", fixture.path])
            let itemsBefore = try await EvstoreProcess.run(["dump", fixture.path, "--items", "--format", "jsonl"])

            let text = input.lines.joined(separator: "\n") + "\n"
            let result = try await EvstoreProcess.run(["import", fixture.path, "-"], stdin: Data(text.utf8))
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.count == 1, "one line on standard error: \(result)")
            #expect(result.stderr.contains(input.blamed), "\(result)")
            #expect(!result.stderr.contains("Fatal error"), "\(result)")

            let after = try await EvstoreProcess.run(["export", fixture.path])
            let itemsAfter = try await EvstoreProcess.run(["dump", fixture.path, "--items", "--format", "jsonl"])
            #expect(after.stdout == before.stdout, "no event was written")
            #expect(itemsAfter.stdout == itemsBefore.stdout)
        }
    }

    /// Every check comes before the first write, across batches too: an event whose id an
    /// earlier line holds with other content fails the import with nothing written.
    @Test("an event id held with other content by a line of an earlier batch fails the import before any write")
    func conflictingLinesInTwoBatches() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let fixture = try MixedStore(in: directory)
            let before = try await EvstoreProcess.run(["export", fixture.path])
            let changes = (0..<1_000).map {
                #"{"collection": "notes", "id": "bulk\#($0)", "op": "put", "fields": {"title": "ok"}}"#
            }
            let other = Self.exported(extra: "").replacingOccurrences(of: "imported", with: "other content")
            let text = ([Self.exported(extra: "")] + changes + [other]).joined(separator: "\n") + "\n"
            let result = try await EvstoreProcess.run(["import", fixture.path, "-"], stdin: Data(text.utf8))
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("line 1002") && result.stderr.contains("also on line 1,"), "\(result)")
            let after = try await EvstoreProcess.run(["export", fixture.path])
            #expect(after.stdout == before.stdout, "no batch was written")
        }
    }

    /// An event under the store's own replica id that the log does not hold, at a sequence a
    /// change line before it will take, would meet that change's event: refused before any write.
    @Test("an event at an own id a change line before it takes fails the import before any write")
    func ownIDTakenByAnEarlierChange() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let fixture = try MixedStore(in: directory)
            let (replica, next) = try {
                var configuration = Store.Configuration()
                configuration.readOnly = true
                let store = try Store.open(at: fixture.path, configuration: configuration)
                defer { store.close() }
                return (store.replicaID, try store.originSequence() + 1)
            }()
            let before = try await EvstoreProcess.run(["export", fixture.path])
            let event = Self.exported(extra: "", idExtra: "")
                .replacingOccurrences(of: "0123456789abcdef0123456789abcdef", with: replica.description)
                .replacingOccurrences(of: #""seq":1}"#, with: #""seq":\#(next)}"#)
            let text = [Self.good1, event].joined(separator: "\n") + "\n"
            let result = try await EvstoreProcess.run(["import", fixture.path, "-"], stdin: Data(text.utf8))
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("line 2") && result.stderr.contains("own replica id"), "\(result)")
            let after = try await EvstoreProcess.run(["export", fixture.path])
            #expect(after.stdout == before.stdout)
        }
    }

    /// Batches are bounded by bytes as well as lines, so large events import as they export.
    @Test("export | import of large events")
    func largeEvents() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let source = directory.appending("source")
            do {
                let store = try Store.open(at: source)
                defer { store.close() }
                let body = String(repeating: "0123456789", count: 90_000)
                for number in 0..<40 {
                    try await store.put("notes", id: "n\(number)", fields: ["body": .string(body + "\(number)")])
                }
            }
            let exported = try await EvstoreProcess.run(["export", source])
            #expect(exported.status == 0, "\(exported)")
            let target = directory.appending("target")
            let imported = try await EvstoreProcess.run(["import", target, "-"], stdin: Data(exported.stdout.utf8))
            #expect(imported.status == 0, "\(imported)")
            let again = try await EvstoreProcess.run(["export", target])
            #expect(again.stdout == exported.stdout)
        }
    }

    @Test("a bad line into a new store leaves no store behind")
    func badLineIntoNewStore() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let target = directory.appending("new")
            let text = TransferCommandTests.good1 + "\n{oops\n"
            let result = try await EvstoreProcess.run(["import", target, "-"], stdin: Data(text.utf8))
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("line 2"), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: target + "/data.mdb"))
        }
    }

    /// Values that stress a JSON encoder: escapes, control characters, non-BMP characters, line
    /// separators, extreme integers, small and large doubles, deep nesting, empty containers.
    static let trickyFields: [String: Value] = [
        "quote": "she said \"hi\" \\ and left",
        "control": "tab\tnewline\nreturn\rbell\u{07}nul\u{00}end",
        "unicode": "한국어 ünïcödé 🧪 \u{2028}\u{2029} 𝄞",
        "slash": "a/b</script>",
        "max": .int(Int64.max),
        "min": .int(Int64.min),
        "zero": 0,
        "negative": -42,
        "small": 1e-300,
        "large": 1.5e300,
        "third": .double(1.0 / 3.0),
        "whole": 2.0,
        "nested": ["a": [1, ["b": [true, false, .null]], [:], []]],
        "empty": "",
        "null": .null,
    ]

    @Test("export | import keeps tricky values exactly, and export writes JSON any parser reads")
    func trickyValuesRoundTrip() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let source = directory.appending("source")
            let copy = directory.appending("copy")
            let written = try withStore(at: source) { store in
                try store.append([
                    .put("odd.names_1-x", id: "id with spaces & ünïcödé 🧪", fields: TransferCommandTests.trickyFields),
                    .patch(
                        "odd.names_1-x", id: "id with spaces & ünïcödé 🧪", fields: ["key with \"quotes\" and \\": "v"]),
                ])
            }
            let export = try await EvstoreProcess.run(["export", source])
            #expect(export.status == 0, "\(export)")
            let lines = JSONLines.objects(export)
            try #require(lines.count == 2, "\(export)")
            #expect(export.lines.count == 2, "one event a line: no raw newline inside a line")
            #expect(JSONLines.canonical(lines[0]["fields"]) == JSONLines.canonical(fields: written[0].fields))
            #expect(JSONLines.string(lines[0], "item") == "id with spaces & ünïcödé 🧪")

            let imported = try await EvstoreProcess.run(["import", copy, "-"], stdin: Data(export.stdout.utf8))
            #expect(imported.status == 0, "\(imported)")
            let again = try await EvstoreProcess.run(["export", copy])
            #expect(again.stdout == export.stdout)
            let items = try withStore(at: copy) { store in
                try store.read { try $0.items(in: "odd.names_1-x", limit: 10).items }
            }
            var expected = TransferCommandTests.trickyFields
            expected["key with \"quotes\" and \\"] = "v"
            #expect(items.count == 1)
            #expect(items.first?.fields == expected, "every value survives export and import unchanged")
        }
    }

    @Test("an event line stamped far in the future is refused by name of its line")
    func eventFromTheFuture() async throws {
        try await withTemporaryDirectory(prefix: "evstore-transfer") { directory in
            let fixture = try MixedStore(in: directory)
            let export = try await EvstoreProcess.run(["export", fixture.path])
            var lines = export.lines
            try #require(lines.count == 8)
            let hlc = try #require(JSONLines.string(JSONLines.objects(lines[4])[0], "hlc"))
            let future = HLCTimestamp(physical: systemMilliseconds() + 3_600_000, logical: 0).rawValue
            lines[4] = lines[4].replacingOccurrences(of: "\"hlc\":\"\(hlc)\"", with: "\"hlc\":\"\(future)\"")
            try #require(lines[4] != export.lines[4])
            let target = directory.appending("copy")
            let result = try await EvstoreProcess.run(
                ["import", target, "-"], stdin: Data(lines.joined(separator: "\n").utf8))
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.count == 1 && result.stderr.contains("line 5"), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: target + "/data.mdb"), "nothing was imported")
        }
    }
}
