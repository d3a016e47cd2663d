/// Key encodings. Every key is built so that LMDB's byte order is the order we iterate in:
/// integers are big-endian, and names are separated by a NUL byte (names cannot hold NUL).
enum Keys {
    /// `events`: the seq, 8 bytes big-endian.
    @inline(__always)
    static func seq(_ seq: UInt64) -> [UInt8] {
        withUnsafeBytes(of: seq.bigEndian, Array.init)
    }

    /// Decodes an 8-byte big-endian seq key.
    @inline(__always)
    static func seq(from key: UnsafeRawBufferPointer) throws -> UInt64 {
        guard key.count == 8 else { throw EventStoreError(.corrupt, "event key of \(key.count) bytes") }
        return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
    }

    /// `event_ids`: origin (16 bytes) then origin sequence (8 bytes), big-endian.
    static func eventID(_ id: EventID) -> [UInt8] {
        var writer = ByteWriter(capacity: 24)
        writer.write(id.origin)
        writer.write(bigEndian: id.sequence)
        return writer.bytes
    }

    /// `items` (an item's record): collection, NUL, item id.
    static func item(_ collection: String, _ item: String) -> [UInt8] {
        // Appended from the strings' contiguous UTF-8 (names are native strings): appending their
        // `utf8` views went byte by byte through generic code. (`reserveCapacity` allocates
        // through specialized code; `init(repeating:count:)` and
        // `init(unsafeUninitializedCapacity:)` do not, and look up the storage's metadata on
        // every call.)
        var collection = collection
        var item = item
        var key: [UInt8] = []
        key.reserveCapacity(collection.utf8.count + item.utf8.count + 1)
        collection.withUTF8 { key.append(contentsOf: $0) }
        key.append(0)
        item.withUTF8 { key.append(contentsOf: $0) }
        return key
    }

    /// The prefix of every item key of a collection: collection, NUL.
    static func collectionPrefix(_ collection: String) -> [UInt8] {
        Array(collection.utf8) + [0]
    }

    /// Splits an item key into collection and id.
    static func splitItem(_ key: UnsafeRawBufferPointer) throws -> (collection: String, item: String) {
        guard let separator = key.firstIndex(of: 0) else {
            throw EventStoreError(.corrupt, "item key without separator")
        }
        guard let collection = ByteReader.string(validating: UnsafeRawBufferPointer(rebasing: key[..<separator])),
            let item = ByteReader.string(validating: UnsafeRawBufferPointer(rebasing: key[(separator + 1)...]))
        else { throw EventStoreError(.corrupt, "item key is not UTF-8") }
        return (collection, item)
    }

    /// `items` (a chunk of an item's history, ``ItemHistory``): item key, NUL, the chunk's first
    /// seq (8 bytes big-endian). It sorts right after the item's record, so writing a chunk
    /// dirties the page the item's record is on.
    static func itemEvent(_ itemKey: [UInt8], _ seq: UInt64) -> [UInt8] {
        var key = itemKey
        key.append(0)
        withUnsafeBytes(of: seq.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// Whether an `items` key is a history chunk (``itemEvent(_:_:)``) rather than an item's
    /// record: it holds a second NUL, 9 bytes before its end (collections and ids hold no NUL).
    static func isItemHistory(_ key: UnsafeRawBufferPointer) -> Bool {
        guard key.count >= 11, key[key.count - 9] == 0, let first = key.firstIndex(of: 0) else { return false }
        return first < key.count - 9
    }

    /// `conflicts`: item key, NUL, seq of the event applied, field name.
    static func conflict(_ itemKey: [UInt8], _ seq: UInt64, _ field: String) -> [UInt8] {
        var key = itemEvent(itemKey, seq)
        key.append(contentsOf: field.utf8)
        return key
    }
}
