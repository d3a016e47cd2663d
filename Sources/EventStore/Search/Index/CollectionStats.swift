import LMDB

/// Per-collection totals of the live documents, for BM25 (in the generation's `state`, key
/// `search.stats.` and the collection): the number of documents and the sum of their weighted
/// lengths, 8 bytes each, big-endian.
/// Exact at every commit: a document that dies is subtracted in the same transaction.
struct CollectionStats: Equatable {
    var documents: UInt64 = 0
    var totalLength: UInt64 = 0

    var averageLength: Double { documents == 0 ? 1 : max(Double(totalLength) / Double(documents), 1) }

    /// The prefix of every collection's key in `state`.
    static let keyPrefix = Array("search.stats.".utf8)

    static func key(_ collection: String) -> [UInt8] { keyPrefix + Array(collection.utf8) }

    /// The collections with live documents, in key order.
    static func collections(tx: ReadTransaction, db: Database) throws -> [String] {
        var names: [String] = []
        try keyPrefix.withUnsafeBytes { prefix in
            try tx.forEach(in: db, from: prefix) { key, _ in
                guard key.starts(with: prefix) else { return false }
                names.append(String(decoding: key.dropFirst(prefix.count), as: UTF8.self))
                return true
            }
        }
        return names
    }

    static func load(_ collection: String, tx: ReadTransaction, db: Database) throws -> CollectionStats {
        guard let value = try tx.value(forKey: key(collection), in: db) else { return CollectionStats() }
        return try load(bytes: value)
    }

    /// Decodes a stored value: two 8-byte big-endian integers.
    static func load(bytes: [UInt8]) throws -> CollectionStats {
        try bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            let documents = try reader.readUInt64()
            let stats = CollectionStats(documents: documents, totalLength: try reader.readUInt64())
            guard reader.isAtEnd else { throw ByteReader.corrupt("collection totals") }
            return stats
        }
    }

    func save(_ collection: String, tx: WriteTransaction, db: Database) throws {
        if documents == 0 {
            try tx.delete(Self.key(collection), in: db)
            return
        }
        var writer = ByteWriter(capacity: 16)
        writer.write(bigEndian: documents)
        writer.write(bigEndian: totalLength)
        try tx.put(writer.bytes, forKey: Self.key(collection), in: db)
    }
}
