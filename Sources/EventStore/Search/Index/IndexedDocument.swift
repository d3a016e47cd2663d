import LMDB

/// A document version's entry in `search_documents` (key: its doc id): `varint weighted length ·
/// item key`. Dead entries stay until the merge that drops their postings purges them.
struct IndexedDocument: Equatable {
    var length: UInt32
    var itemKey: [UInt8]

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 3 + itemKey.count)
        writer.write(varint: UInt64(length))
        writer.write(raw: itemKey)
        return writer.bytes
    }

    init(length: UInt32, itemKey: [UInt8]) {
        self.length = length
        self.itemKey = itemKey
    }

    init(decoding value: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(value)
        let length = try reader.readVarint()
        guard length <= UInt64(UInt32.max), reader.remaining > 0 else { throw ByteReader.corrupt("search document") }
        self.length = UInt32(length)
        itemKey = Array(try reader.readBytes(reader.remaining))
    }

    /// The item key alone, without copying the rest.
    static func itemKey(in value: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        var reader = ByteReader(value)
        _ = try reader.readVarint()
        guard reader.remaining > 0 else { throw ByteReader.corrupt("search document") }
        return try reader.readBytes(reader.remaining)
    }

    static func load(_ docID: UInt32, tx: ReadTransaction, database: Database) throws -> IndexedDocument? {
        try IndexKeys.document(docID).withUnsafeBytes { key in
            try tx.value(forKey: key, in: database).map { try IndexedDocument(decoding: $0) }
        }
    }
}
