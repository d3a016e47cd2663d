import LMDB

/// An item's record in the `items` database: its merged state and the doc id of its current
/// search document. (The item's history entries follow it in the same database; see
/// ``Keys/itemEvent(_:_:)`` and ``forEach(in:tx:from:_:)``.)
///
/// ```
/// ItemState bytes (see ItemState+Binary)
/// [u32 BE search doc id, when the item has a search document]
/// ```
///
/// Keeping the doc id here rather than in a table of its own means an item update that changes
/// searchable text dirties no page beyond the item's own to find and replace its document. The
/// state is what replicas agree on byte for byte; the doc id depends on how commits were
/// grouped, so ``Store/verify(progress:)`` compares the states as bytes and the doc ids by what
/// they index (``SearchIndexAudit``).
struct ItemRecord {
    var state: ItemState
    /// The item's current search document, or 0 when it has none.
    var searchDocument: UInt32

    init(state: ItemState = ItemState(), searchDocument: UInt32 = 0) {
        self.state = state
        self.searchDocument = searchDocument
    }

    init(decoding buffer: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(buffer)
        state = try ItemState(reading: &reader)
        switch reader.remaining {
        case 0: searchDocument = 0
        case 4:
            searchDocument = try reader.readUInt32()
            // 0 means "none", which is written as no bytes at all.
            guard searchDocument != 0 else { throw ByteReader.corrupt("item search document 0") }
        default: throw ByteReader.corrupt("item (trailing bytes)")
        }
    }

    /// The state part of a stored entry: its bytes without the doc id, as verify compares them.
    static func stateBytes(of buffer: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        var reader = ByteReader(buffer)
        _ = try ItemState(reading: &reader)
        return UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count - reader.remaining)])
    }

    /// What verify compares of an `items` entry: a record's state bytes (without the doc id); a
    /// history entry, or a record that does not decode, as it is.
    static func comparableBytes(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if Keys.isItemHistory(key) { return value }
        return (try? stateBytes(of: value)) ?? value
    }

    /// Calls `body` with each item record of `database` (an `items` database) from `start` on,
    /// in key order, skipping the history entries that follow each record (by seeking past them,
    /// so an item with a long history costs one step), until `body` returns `false`.
    static func forEach(
        in database: Database, tx: ReadTransaction, from start: [UInt8]? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try tx.withCursor(on: database) { cursor in
            var entry = try start.map { try cursor.seek(atLeast: $0) } ?? cursor.first()
            while let current = entry {
                if Keys.isItemHistory(current.key) {
                    // The smallest key after every `collection NUL id NUL seq` of this item.
                    var past = Array(current.key[..<(current.key.count - 9)])
                    past.append(1)
                    entry = try cursor.seek(atLeast: past)
                    continue
                }
                guard try body(current.key, current.value) else { return }
                entry = try cursor.next()
            }
        }
    }

    func encoded() -> [UInt8] {
        var bytes = state.encoded()
        if searchDocument != 0 { withUnsafeBytes(of: searchDocument.bigEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }
}
