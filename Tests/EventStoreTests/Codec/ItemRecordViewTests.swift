import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Reading an item's record in place shows what decoding its whole state shows: the same fields,
/// each found by name, with and without the index of field places; a damaged record fails.
struct ItemRecordViewTests {
    /// Calls `body` with the record of each item of `collection`.
    static func forEachRecord(
        _ store: Store, _ collection: String, _ body: (String, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try store.read { reader in
            try reader.forEachItemRecord(in: collection) { id, record in
                try body(id, record)
                return true
            }
        }
    }

    @Test func fieldsFoundByNameEqualTheDecodedState() async throws {
        var things = CollectionSchema("things", version: 1)
        things.merge("tags", as: .addWinsSet)
        things.merge("count", as: .counter)
        var configuration = Store.Configuration()
        configuration.schemas = [things]
        try await withTemporaryStore(configuration: configuration) { store in
            var random = SeededGenerator(seed: 11)
            let names = (0..<24).map { "f\($0)" } + ["é", "zeta", "a b", "Z"]
            let values: [Value] = [.null, true, 7, -3.5, "x", "ünï", [1, "a"], ["k": [true]]]
            for number in 0..<60 {
                // Up to 24 fields: more than the view indexes (16), to read the rest by walking.
                let count = Int.random(in: 1...24, using: &random)
                var fields: [String: Value] = [:]
                for _ in 0..<count {
                    fields[names.randomElement(using: &random)!] = values.randomElement(using: &random)!
                }
                try await store.append([.put("things", id: "t\(number)", fields: fields)])
            }
            // Records of format 2: an add-wins set and a counter beside plain fields.
            try await store.append([
                .put("things", id: "merged", fields: ["title": "m"]),
                .edit("things", id: "merged", ["tags": .add(["a", "b"])]),
                .increment("things", id: "merged", field: "count", by: 3),
            ])
            try await store.append([.delete("things", id: "t0")])

            var checked = 0
            try Self.forEachRecord(store, "things") { id, record in
                let state = try ItemRecord(decoding: record).state
                let expected = state.values
                let view = try ItemRecordView(record)
                let indexed = try view.indexed()
                #expect(view.exists == state.exists, "\(id)")
                #expect(view.version == (state.version?.hlc ?? .zero), "\(id)")
                #expect(try view.fields() == expected, "\(id)")
                #expect(try view.names() == expected.keys.sorted(by: utf8Less), "\(id)")
                for name in names + ["tags", "count", "title", "missing", "f", "f100"] {
                    #expect(try view.value(name) == expected[name], "\(id).\(name)")
                    #expect(try indexed.value(name) == expected[name], "\(id).\(name)")
                }
                let some: Set = ["f1", "zeta", "tags", "nothing"]
                #expect(try view.fields(only: some) == expected.filter { some.contains($0.key) }, "\(id)")
                checked += 1
            }
            #expect(checked == 61)
        }
    }

    /// A reader of many records shares one ``FieldsTemplate``: every record still shows its own
    /// fields, whether its names are the template's, differ in one byte, are fewer, more, or
    /// too many to remember, and what it returned before stays as it was.
    @Test func fieldsThroughATemplateEqualTheDecodedOnes() async throws {
        try await withTemporaryStore { store in
            let shapes: [[String]] = [
                ["done", "due", "folder", "title"], ["done", "due", "folder", "titlf"], ["done", "due", "folder"],
                ["done", "due", "folder", "title", "zz"], ["é", "ü"], (0..<40).map { "f\($0)" },
            ]
            var random = SeededGenerator(seed: 5)
            var expected: [String: [String: Value]] = [:]
            for number in 0..<300 {
                // Runs of one shape, then another, as a collection's items come.
                let shape = shapes[(number / 7 + Int.random(in: 0...1, using: &random)) % shapes.count]
                var fields: [String: Value] = [:]
                // Each value names its field and record: a value put under another name shows.
                for (index, name) in shape.enumerated() {
                    let tag = "\(name)-\(number)"
                    let values: [Value] = [
                        .int(Int64(number * 100 + index)), .string(tag), [.string(tag)], ["k": .string(tag)],
                    ]
                    fields[name] = values[(number + index) % 4]
                }
                let id = String(format: "t%03d", number)
                expected[id] = fields
                try await store.append([.put("things", id: id, fields: fields)])
            }
            for _ in 0..<2 {
                var template = FieldsTemplate()
                var earlier: [(String, [String: Value])] = []
                try Self.forEachRecord(store, "things") { id, record in
                    let fields = try ItemRecordView(record).fields(template: &template)
                    #expect(fields == expected[id], "\(id)")
                    earlier.append((id, fields))
                }
                #expect(earlier.count == 300)
                // Runs of one shape reuse its template (about a third of the records here).
                #expect(template.hits >= 60)
                for (id, fields) in earlier { #expect(fields == expected[id], "\(id) changed later") }
            }
            // An item without fields, between items of one shape, neither uses nor replaces the template.
            try await store.append([.put("things", id: "t000a", fields: [:])])
            var template = FieldsTemplate()
            var hits = 0
            try Self.forEachRecord(store, "things") { id, record in
                guard ["t000", "t000a", "t001"].contains(id) else { return }
                let fields = try ItemRecordView(record).fields(template: &template)
                #expect(fields == (expected[id] ?? [:]), "\(id)")
                hits = template.hits
            }
            #expect(hits == (expected["t001"]!.keys.sorted() == expected["t000"]!.keys.sorted() ? 1 : 0))
            // A record whose names match the template but whose value is damaged fails as corrupt.
            var record: [UInt8] = []
            try Self.forEachRecord(store, "things") { id, bytes in if id == "t000" { record = Array(bytes) } }
            template = FieldsTemplate()
            _ = try record.withUnsafeBytes { try ItemRecordView($0).fields(template: &template) }
            let value = try #require((0..<record.count - 5).first { record[$0..<$0 + 5].elementsEqual("title".utf8) })
            var damaged = record
            damaged[value + 5] = 0xEE  // the title's value tag
            #expect(throws: EventStoreError.self) {
                _ = try damaged.withUnsafeBytes { try ItemRecordView($0).fields(template: &template) }
            }
        }
    }

    @Test func aDamagedRecordFailsAsCorrupt() async throws {
        try await withTemporaryStore { store in
            try await store.append([.put("things", id: "a", fields: ["alpha": "one", "beta": 2, "gamma": [true]])])
            var record: [UInt8] = []
            try Self.forEachRecord(store, "things") { _, bytes in record = Array(bytes) }
            // The last field's name: a record cut before its value is cut inside the fields.
            let gamma = try #require(
                (0..<record.count - 5).first { record[$0..<$0 + 5].elementsEqual("gamma".utf8) })
            var invalid = record
            invalid[gamma] = 0xFF
            // Every truncation and a name made invalid UTF-8: a `corrupt` error or, for a record
            // cut after its fields, the fields it holds; never a crash.
            for bytes in (0..<record.count).map({ Array(record.prefix($0)) }) + [invalid] {
                let cutInsideFields = bytes.count < gamma + 6 || bytes == invalid
                do {
                    let fields = try bytes.withUnsafeBytes { buffer in
                        let view = try ItemRecordView(buffer).indexed()
                        _ = try view.value("gamma")
                        return try view.fields()
                    }
                    #expect(!cutInsideFields, "\(bytes.count) bytes")
                    #expect(fields == ["alpha": "one", "beta": 2, "gamma": [true]])
                } catch let error as EventStoreError {
                    #expect(error.code == .corrupt)
                }
            }
        }
    }
}
