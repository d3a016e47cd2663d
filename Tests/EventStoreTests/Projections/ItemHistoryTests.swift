import EventStoreTestSupport
import LMDB
import Testing

@testable import EventStore

/// An item's history: its newest seqs in its record, older ones in chunks (store format 4), and
/// store format 3's one entry per event still read, then upgraded.
struct ItemHistoryTests {
    private typealias F = ProjectionFixtures

    /// 40 edits of `n1`, each after an edit of another item, so that `n1`'s seqs are not
    /// consecutive; returns `n1`'s seqs.
    private func edit(_ store: Store) async throws -> [UInt64] {
        var seqs: [UInt64] = []
        for round in 0..<40 {
            try await store.put("notes", id: "other\(round % 3)", fields: ["title": .string("other \(round)")])
            let change: Change =
                round % 2 == 0
                ? .put("notes", id: "n1", fields: ["title": .string("history \(round)"), "rank": .int(Int64(round))])
                : .patch("notes", id: "n1", fields: ["rank": .int(Int64(round))])
            seqs += try await store.append([change]).map(\.seq)
        }
        return seqs
    }

    /// The `items` entries of `n1`: its record, then its chunks, as (key, value).
    private func entries(of item: String, _ store: Store) throws -> [(key: [UInt8], value: [UInt8])] {
        let itemKey = Keys.item("notes", item)
        return try store.read { reader in
            var entries: [(key: [UInt8], value: [UInt8])] = []
            try itemKey.withUnsafeBytes { start in
                try reader.tx.forEach(in: reader.projection.items, from: start) { key, value in
                    guard key.starts(with: itemKey), key.count == itemKey.count || key[itemKey.count] == 0 else {
                        return false
                    }
                    entries.append((Array(key), Array(value)))
                    return true
                }
            }
            return entries
        }
    }

    @Test func aLongHistoryIsChunkedAndReadBackWhole() async throws {
        try await withTemporaryStore { store async throws in
            let seqs = try await edit(store)
            #expect(try store.read { try $0.events(collection: "notes", item: "n1") }.map(\.seq) == seqs)

            // 40 seqs: two chunks of 16 after the record, 8 in the record.
            let stored = try entries(of: "n1", store)
            #expect(stored.count == 3)
            let record = try stored[0].value.withUnsafeBytes { try ItemRecord(decoding: $0) }
            #expect(record.history == Array(seqs[32...]))
            #expect(stored[1].key == Keys.itemEvent(Keys.item("notes", "n1"), seqs[0]))
            #expect(stored[2].key == Keys.itemEvent(Keys.item("notes", "n1"), seqs[16]))
            let history = try store.read { reader in
                try ItemHistory.seqs(of: Keys.item("notes", "n1"), tx: reader.tx, items: reader.projection.items)
            }
            #expect(history == seqs)

            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems)")
            let bytes = try F.itemStates(store, history: true)
            try await store.rebuildProjections()
            #expect(try F.itemStates(store, history: true) == bytes, "a rebuild writes the same records and chunks")
            #expect(try store.history(collection: "notes", item: "n1", field: "rank").count == 40)
        }
    }

    @Test func aFormat3StoreIsReadThenUpgradedByItsFirstWritableOpen() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var store = try Store.open(at: directory.path)
        let seqs = try await edit(store)
        let items = try F.state(store)
        store.close()

        // What format 3 left: records without a history, one empty entry per event.
        try downgradeToFormat3(directory.path)
        try expectFormat3(directory.path, history: seqs)

        store = try Store.open(at: directory.path)
        defer { store.close() }
        #expect(
            try store.read { try $0.metadata(forKey: "store.format") }
                == withUnsafeBytes(of: Meta.currentFormat.bigEndian, Array.init))
        #expect(try store.read { try $0.events(collection: "notes", item: "n1") }.map(\.seq) == seqs)
        #expect(try entries(of: "n1", store).count == 3, "rebuilt as chunks")
        #expect(try F.state(store) == items)
        let report = try store.verify()
        #expect(report.isConsistent, "\(report.problems)")
    }

    /// Rewrites the active generation's `items` as store format 3 wrote them: records without a
    /// history (a doc id only when there is one), one entry with an empty value per event.
    private func downgradeToFormat3(_ path: String) throws {
        let environment = try Environment.open(path: path)
        try environment.write { tx in
            let meta = try tx.openDatabase(named: "meta", options: [])
            try tx.put(
                withUnsafeBytes(of: UInt64(3).bigEndian, Array.init), forKey: Array("store.format".utf8), in: meta)
            let database = try tx.openDatabase(named: "g0.items", options: [])
            var rewritten: [(key: [UInt8], value: [UInt8])] = []
            var chunks: [[UInt8]] = []
            try tx.forEach(in: database) { key, value in
                guard !Keys.isItemHistory(key) else {
                    chunks.append(Array(key))
                    return true
                }
                let record = try ItemRecord(decoding: value)
                var old = record.state.encoded()
                if record.searchDocument != 0 {
                    withUnsafeBytes(of: record.searchDocument.bigEndian) { old.append(contentsOf: $0) }
                }
                rewritten.append((Array(key), old))
                for seq in try ItemHistory.seqs(of: Array(key), tx: tx, items: database) {
                    rewritten.append((Keys.itemEvent(Array(key), seq), []))
                }
                return true
            }
            for key in chunks { try tx.delete(key, in: database) }
            for (key, value) in rewritten { try tx.put(value, forKey: key, in: database) }
        }
    }

    /// Format 3's records and history entries read as they did.
    private func expectFormat3(_ path: String, history seqs: [UInt64]) throws {
        let environment = try Environment.open(path: path)
        try environment.read { tx in
            let database = try tx.openDatabase(named: "g0.items")
            #expect(try ItemHistory.seqs(of: Keys.item("notes", "n1"), tx: tx, items: database) == seqs)
            let record = try Keys.item("notes", "n1").withUnsafeBytes { key in
                try tx.value(forKey: key, in: database).map { try ItemRecord(decoding: $0) }
            }
            #expect(record?.history == [] && record?.searchDocument != 0, "a format-3 record decodes")
        }
    }

    @Test func aCorruptHistoryIsReportedNotRead() throws {
        let state = ItemState()
        var writer = ByteWriter()
        writer.bytes = state.encoded()
        writer.write(varint: ItemRecord.inlineHistory + 1)
        for _ in 0...ItemRecord.inlineHistory { writer.write(varint: 1) }
        writer.write(bigEndian: UInt32(0))
        #expect(throws: EventStoreError.self) { _ = try writer.bytes.withUnsafeBytes { try ItemRecord(decoding: $0) } }

        var zero = ByteWriter()
        zero.bytes = state.encoded()
        zero.write(varint: 2)
        zero.write(varint: 5)
        zero.write(varint: 0)  // a delta of 0: the same seq twice
        zero.write(bigEndian: UInt32(0))
        #expect(throws: EventStoreError.self) { _ = try zero.bytes.withUnsafeBytes { try ItemRecord(decoding: $0) } }

        var reader = ByteReader(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(try ItemHistory.readSeqs(count: 0, from: &reader) == [])
    }
}
