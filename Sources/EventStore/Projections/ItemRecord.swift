import LMDB

/// An item's record in the `items` database: its merged state, the seqs of its newest events,
/// and the doc id of its current search document. (The item's older events are in history
/// chunks that follow it in the same database; see ``ItemHistory``.)
///
/// ```
/// ItemState bytes (see ItemState+Binary)
/// varint  count of inline history seqs (at most inlineHistory), then the first seq as a
///         varint and each next one as a varint delta (> 0)
/// u32 BE  search doc id (0: none)
/// ```
///
/// Store format 3 wrote the state alone, or the state and a non-zero doc id (0 or 4 bytes after
/// the state; 5 or more now), and kept one history entry per event; both are still read.
///
/// Keeping the doc id here rather than in a table of its own means an item update that changes
/// searchable text dirties no page beyond the item's own to find and replace its document, and
/// keeping the newest seqs here means an event adds no entry to the tree. The state and the
/// history are what replicas agree on byte for byte; the doc id depends on how commits were
/// grouped, so ``Store/verify(progress:)`` compares the rest as bytes and the doc ids by what
/// they index (``SearchIndexAudit``).
struct ItemRecord {
    var state: ItemState
    /// The item's current search document, or 0 when it has none.
    var searchDocument: UInt32
    /// The seqs of the item's newest events, oldest first: at most ``inlineHistory``; the older
    /// ones are in history chunks.
    var history: [UInt64]

    /// The most seqs a record holds: when one more comes, they move to a history chunk.
    static let inlineHistory = 16

    init(state: ItemState = ItemState(), searchDocument: UInt32 = 0, history: [UInt64] = []) {
        self.state = state
        self.searchDocument = searchDocument
        self.history = history
    }

    init(decoding buffer: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(buffer)
        state = try ItemState(reading: &reader)
        history = []
        switch reader.remaining {
        case 0: searchDocument = 0
        case 4:
            // Format 3: a doc id follows the state only when there is one.
            searchDocument = try reader.readUInt32()
            guard searchDocument != 0 else { throw ByteReader.corrupt("item search document 0") }
        default:
            let count = try reader.readCount()
            guard count <= ItemRecord.inlineHistory else { throw ByteReader.corrupt("item history") }
            history = try ItemHistory.readSeqs(count: count, from: &reader)
            guard reader.remaining == 4 else { throw ByteReader.corrupt("item (trailing bytes)") }
            searchDocument = try reader.readUInt32()
        }
    }

    /// The state part of a stored entry: its bytes without the doc id, as verify compares them.
    static func stateBytes(of buffer: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        var reader = ByteReader(buffer)
        _ = try ItemState(reading: &reader)
        return UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count - reader.remaining)])
    }

    /// What verify compares of an `items` entry: a record's state and history bytes (without the
    /// doc id); a history chunk, or a record that does not decode, as it is.
    static func comparableBytes(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if Keys.isItemHistory(key) { return value }
        guard let state = try? stateBytes(of: value) else { return value }
        let tail = value.count - state.count
        return tail > 4 ? UnsafeRawBufferPointer(rebasing: value[..<(value.count - 4)]) : state
    }

    /// Adds `seq` to the item's history. When the record already holds ``inlineHistory`` seqs,
    /// they move to a new history chunk: returns its key and value, for the caller to write.
    mutating func appendHistory(_ seq: UInt64, itemKey: [UInt8]) -> (key: [UInt8], value: [UInt8])? {
        var chunk: (key: [UInt8], value: [UInt8])?
        if history.count >= ItemRecord.inlineHistory {
            chunk = ItemHistory.chunk(history, itemKey: itemKey)
            history.removeAll(keepingCapacity: true)
        }
        if let last = history.last, seq <= last {
            // Seqs come in log order; keep the list sorted and unique should one not.
            if !history.contains(seq) {
                history.append(seq)
                history.sort()
            }
        } else {
            history.append(seq)
        }
        return chunk
    }

    /// Calls `body` with each item record of `database` (an `items` database) from `start` on,
    /// in key order, skipping the history chunks that follow each record (by seeking past them,
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
        var writer = ByteWriter(capacity: 0)
        writer.bytes = state.encoded()
        writer.write(varint: history.count)
        ItemHistory.writeSeqs(history, into: &writer)
        writer.write(bigEndian: searchDocument)
        return writer.bytes
    }
}
