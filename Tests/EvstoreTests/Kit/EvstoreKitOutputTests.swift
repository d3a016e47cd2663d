import EventStore
import EventStoreTestSupport
import EvstoreKit
import Foundation
import Testing

/// The library behind `evstore`, called in-process: tables, clock arguments, names, metadata
/// decoding and import parsing.
@Suite("EvstoreKit output and parsing")
struct EvstoreKitOutputTests {
    // MARK: Table

    @Test("a table aligns cells by terminal columns: Hangul counts double")
    func tableAlignsWideCharacters() {
        var table = Table(columns: ["id", "title", "n"])
        table.rightAligned = [2]
        table.add(["a", "동기화 회의", "7"])
        table.add(["bb", "sync", "12"])
        let lines = table.render()
        #expect(lines.count == 4)
        #expect(lines[0] == "id  title         n", "the number column is right-aligned, its title too")
        #expect(lines[1] == "──  ───────────  ──")
        #expect(lines[2] == "a   동기화 회의   7")
        #expect(lines[3] == "bb  sync         12")
        let widths = lines.map(Table.displayWidth)
        #expect(widths[2] == widths[3], "rows end in the same column")
    }

    @Test("long cells are cut with … at the column limit, newlines shown as ⏎")
    func tableCutsLongCells() {
        #expect(Table.cut("abcdefghij", 5) == "abcd…")
        #expect(Table.cut("동기화를 테스트", 6) == "동기…")
        #expect(Table.cut("one\ntwo", 20) == "one⏎two")
        #expect(Table.cut("short", 10) == "short")
        var table = Table(columns: ["x"])
        table.maxCellWidth = 4
        table.add(["123456"])
        #expect(table.render().last == "123…")
    }

    @Test("rows may have more cells than titles")
    func tableWithExtraCells() {
        var table = Table(columns: ["a"])
        table.add(["1", "two", "three"])
        table.add(["22"])
        #expect(table.render().dropFirst(2) == ["1   two  three", "22"])
    }

    // MARK: Clock arguments

    @Test("a clock stamp parses from its decimal raw value and from its printed form")
    func clockArguments() throws {
        let stamp = HLCTimestamp(physical: 1_795_344_442_358, logical: 2)
        #expect(ClockArgument.parse(String(stamp.rawValue)) == stamp)
        #expect(ClockArgument.parse(stamp.description) == stamp, "\(stamp)")
        let noLogical = try #require(ClockArgument.parse("2026-11-22T10:47:22.358Z"))
        #expect(noLogical == HLCTimestamp(physical: 1_795_344_442_358, logical: 0))
        #expect(ClockArgument.parse("2026-11-22T10:47:22Z") == HLCTimestamp(physical: 1_795_344_442_000, logical: 0))
        #expect(
            ClockArgument.parse("2026-11-22T10:47:22.3Z+4") == HLCTimestamp(physical: 1_795_344_442_300, logical: 4))
        for bad in ["yesterday", "", "2026-11-22T10:47:22.358Z+x", "-5", "2026-13-40T99:00:00Z"] {
            #expect(ClockArgument.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("printed stamps are exact to the millisecond and read back unchanged")
    func stampsRoundTrip() {
        #expect(Rendering.stamp(HLCTimestamp(physical: 1_795_347_303_001, logical: 0)) == "2026-11-22T11:35:03.001Z+0")
        #expect(Rendering.stamp(HLCTimestamp(physical: 1_795_347_303_123, logical: 7)) == "2026-11-22T11:35:03.123Z+7")
        #expect(Rendering.stamp(HLCTimestamp(physical: 0, logical: 0)) == "1970-01-01T00:00:00.000Z+0")
        var random = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            let stamp = HLCTimestamp(
                physical: UInt64.random(in: 0..<4_102_444_800_000, using: &random),
                logical: UInt16.random(in: 0...UInt16.max, using: &random))
            #expect(ClockArgument.parse(Rendering.stamp(stamp)) == stamp, "\(Rendering.stamp(stamp))")
        }
    }

    // MARK: Names and numbers

    @Test("replicas show by name, else by 8 hex digits, the local one marked")
    func replicaNames() {
        let phone = ReplicaID(hex: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")!
        let other = ReplicaID(hex: "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2")!
        let local = ReplicaID(hex: "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3")!
        let names = ReplicaNames([phone: "phone"], local: local)
        #expect(names.label(phone) == "phone")
        #expect(names.label(other) == "b2b2b2b2")
        #expect(names.label(local) == "c3c3c3c3 (local)")
        #expect(names.event(EventID(origin: phone, sequence: 4)) == "phone/4")
        #expect(names.event(EventID(origin: local, sequence: 9)) == "c3c3c3c3/9")
    }

    @Test("byte counts for people")
    func byteCounts() {
        #expect(Rendering.bytes(512) == "512 B")
        #expect(Rendering.bytes(4096) == "4.0 KiB")
        #expect(Rendering.bytes(122_880) == "120.0 KiB")
        #expect(Rendering.bytes(8 << 30) == "8.0 GiB")
    }

    // MARK: Metadata

    @Test("dump --meta decodes the engine's keys, the checkpoint and an application's key")
    func metadataEntries() throws {
        let replica = ReplicaID(hex: "0123456789abcdef0123456789abcdef")!
        var configuration = Store.Configuration()
        configuration.replicaID = replica
        try withTemporaryStore(configuration: configuration) { store in
            try store.append([
                .put("notes", id: "n1", fields: ["title": "x"]), .put("notes", id: "n2", fields: ["title": "y"]),
            ])
            try store.write { writer in try writer.setMetadata(Array("hello".utf8), forKey: "app.greeting") }
            let entries = try Dump.metaEntries(store)
            func entry(_ database: String, _ key: String) -> MetaEntry? {
                entries.first { $0.database == database && $0.key == key }
            }
            #expect(entry("meta", "store.replica")?.value == .string(replica.description))
            #expect(entry("meta", "store.format")?.value == .int(7))
            #expect(entry("meta", "store.origin-seq")?.value == .int(2))
            #expect(entry("meta", "app.greeting")?.value == .string("hello"))
            #expect(entry("meta", "app.greeting")?.about == "application entry")
            let hlc = try #require(entry("meta", "store.hlc"))
            let head = try #require(try store.read { try $0.event(at: 2) })
            #expect(hlc.value == .string(String(head.hlc.rawValue)))
            #expect(hlc.text == Rendering.stamp(head.hlc))
            #expect(entry("g0.state", "applied-through")?.value == .int(2))
            #expect(entry("g0.state", "count.notes")?.value == .int(2))
            #expect(entries.allSatisfy { !$0.about.isEmpty })
        }
    }

    // MARK: Import parsing

    @Test("import lines: changes, events, blank lines; a bad line is named")
    func importParsing() throws {
        let event = Event(
            id: EventID(origin: ReplicaID(hex: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")!, sequence: 3),
            hlc: HLCTimestamp(physical: 1_795_344_442_358, logical: 1), collection: "notes", item: "n1",
            operation: .patch, fields: ["title": "from an export"])
        let text = """
            {"collection": "notes", "id": "n1", "op": "put", "fields": {"title": "Hi", "n": 1}}

            \(String(decoding: event.jsonBytes(), as: UTF8.self))
            {"collection": "notes", "id": "n1", "op": "delete"}
            """
        let lines = try Transfer.parse(Data(text.utf8))
        #expect(lines.map(\.number) == [1, 3, 4])
        guard case .change(let put) = lines[0].content else { Issue.record("line 1 is a change"); return }
        #expect(put == .put("notes", id: "n1", fields: ["title": "Hi", "n": 1]))
        guard case .event(let parsed) = lines[1].content else { Issue.record("line 3 is an event"); return }
        #expect(parsed.id == event.id && parsed.hlc == event.hlc && parsed.fields == event.fields)

        for (bad, line) in [
            ("{\"collection\": \"notes\"}\n", 1), ("\n\n[1]\n", 3),
            ("{}\n{\"collection\": \"c\", \"id\": \"x\", \"op\": \"nope\"}", 1),
        ] {
            #expect {
                _ = try Transfer.parse(Data(bad.utf8))
            } throws: { error in
                (error as? ToolError)?.message.hasPrefix("line \(line)") == true
            }
        }
    }
}
