import LMDB

/// Per-collection totals of the live documents, for BM25 (`search_stats`, key the collection):
/// the number of documents and the sum of their weighted lengths, 8 bytes each, big-endian.
/// Exact at every commit: a document that dies is subtracted in the same transaction.
struct CollectionStats: Equatable {
    var documents: UInt64 = 0
    var totalLength: UInt64 = 0

    var averageLength: Double { documents == 0 ? 1 : max(Double(totalLength) / Double(documents), 1) }

    static func load(_ collection: String, tx: ReadTransaction, db: Database) throws -> CollectionStats {
        guard let value = try tx.value(forKey: Array(collection.utf8), in: db) else { return CollectionStats() }
        return try value.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            let documents = try reader.readUInt64()
            return CollectionStats(documents: documents, totalLength: try reader.readUInt64())
        }
    }

    func save(_ collection: String, tx: WriteTransaction, db: Database) throws {
        if documents == 0 {
            try tx.delete(Array(collection.utf8), in: db)
            return
        }
        var writer = ByteWriter(capacity: 16)
        writer.write(bigEndian: documents)
        writer.write(bigEndian: totalLength)
        try tx.put(writer.bytes, forKey: Array(collection.utf8), in: db)
    }
}
