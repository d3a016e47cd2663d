import LMDB

/// Maintains the inverted index of one projection generation.
///
/// Layout:
/// - `search_postings` (duplicate-sorted, fixed 8-byte values): key `collection NUL term`, values
///   `doc id (u32) · weighted term frequency (u16) · weighted doc length (u16)`, big-endian, so a
///   term's postings are in doc-id order and scoring needs no other lookup. Tags are indexed as
///   the term `0x01 tag` with a zero frequency (filter only).
/// - `search_docs`: item key → doc id, length, and the postings written (to remove them later).
/// - `search_docids`: doc id → item key.
/// - `search_stats`: collection → document count and total length (for BM25's average length).
/// - `state["search.next-doc"]`: the next doc id. Doc ids follow the log order, so a rebuild
///   assigns the same ones.
struct SearchIndexWriter {
    let configuration: SearchConfiguration
    let tokenizer = Tokenizer()

    static let nextDocKey = Array("search.next-doc".utf8)
    static let tagMarker: UInt8 = 0x01

    /// A document as indexed: its weighted terms and tags.
    struct Document: Equatable {
        var terms: [String: UInt32] = [:]
        var tags: [String] = []
        var length: UInt32 = 0
    }

    /// The searchable content of an item state, or `nil` when nothing is searchable.
    func document(collection: String, state: ItemState) -> Document? {
        guard state.exists else { return nil }
        let fields = configuration.fields(for: collection)
        guard !fields.isEmpty else { return nil }
        var document = Document()
        for field in fields {
            guard let value = state.fields[field.name]?.value else { continue }
            forEachString(in: value) { text in
                tokenizer.forEachIndexTerm(in: text) { term in
                    document.terms[term, default: 0] += UInt32(field.weight)
                    document.length += UInt32(field.weight)
                }
            }
        }
        if let tags = state.fields[configuration.tagField]?.value {
            var seen = Set<String>()
            forEachString(in: tags) { tag in
                let normalized = tokenizer.normalizeTag(tag)
                if !normalized.isEmpty && seen.insert(normalized).inserted { document.tags.append(normalized) }
            }
            document.tags.sort(by: utf8Less)
        }
        return document
    }

    private func forEachString(in value: Value, _ body: (String) -> Void) {
        switch value {
        case .string(let text): body(text)
        case .array(let values): for element in values { forEachString(in: element, body) }
        default: break
        }
    }

    /// The searchable parts of two states are the same: nothing to re-index.
    func searchableContentEqual(collection: String, _ lhs: ItemState, _ rhs: ItemState) -> Bool {
        guard lhs.exists == rhs.exists else { return false }
        for field in configuration.fields(for: collection) where lhs.fields[field.name]?.value != rhs.fields[field.name]?.value {
            return false
        }
        return lhs.fields[configuration.tagField]?.value == rhs.fields[configuration.tagField]?.value
    }

    /// Re-indexes one item after a change from `before` to `after`.
    func update(
        collection: String, itemKey: [UInt8], before: ItemState, after: ItemState, tx: WriteTransaction,
        databases: ProjectionDatabases, counters: inout ProjectionCounters
    ) throws {
        if searchableContentEqual(collection: collection, before, after) { return }
        let stored = try StoredDocument.load(itemKey: itemKey, tx: tx, databases: databases)
        let document = self.document(collection: collection, state: after)
        if let stored {
            remove(stored, collection: collection, from: &counters.postings)
            var stats = try counters.collectionStats(collection, tx: tx, databases: databases)
            stats.documents -= 1
            stats.totalLength -= UInt64(stored.length)
            counters.stats[collection] = stats
        }
        guard let document else {
            if let stored {
                try tx.delete(itemKey, in: databases.searchDocs)
                try tx.delete(StoredDocument.docIDKey(stored.docID), in: databases.searchDocIDs)
            }
            return
        }
        let docID = try stored?.docID ?? allocateDocID(itemKey: itemKey, tx: tx, databases: databases, counters: &counters)
        try index(document, docID: docID, collection: collection, itemKey: itemKey, tx: tx, databases: databases, counters: &counters)
    }

    /// Whether items of `collection` are indexed at all.
    func indexes(_ collection: String) -> Bool { !configuration.fields(for: collection).isEmpty }

    /// Writes `document` as `docID`: its postings (buffered), its entry in `search_docs`, and the
    /// collection's statistics.
    func index(
        _ document: Document, docID: UInt32, collection: String, itemKey: [UInt8], tx: WriteTransaction,
        databases: ProjectionDatabases, counters: inout ProjectionCounters
    ) throws {
        let entry = StoredDocument(
            docID: docID, length: min(document.length, UInt32(UInt16.max)),
            terms: document.terms.map { ($0.key, UInt16(min($0.value, UInt32(UInt16.max)))) }
                .sorted { utf8Less($0.0, $1.0) },
            tags: document.tags)
        insert(entry, collection: collection, into: &counters.postings)
        try tx.put(entry.encoded(), forKey: itemKey, in: databases.searchDocs)
        var stats = try counters.collectionStats(collection, tx: tx, databases: databases)
        stats.documents += 1
        stats.totalLength += UInt64(entry.length)
        counters.stats[collection] = stats
    }

    private func allocateDocID(
        itemKey: [UInt8], tx: WriteTransaction, databases: ProjectionDatabases, counters: inout ProjectionCounters
    ) throws -> UInt32 {
        let next = try counters.allocateDocID(tx: tx, databases: databases)
        try tx.put(itemKey, forKey: StoredDocument.docIDKey(next), in: databases.searchDocIDs)
        return next
    }

    static func postingKey(collection: String, term: String) -> [UInt8] {
        var key = Keys.collectionPrefix(collection)
        key.append(contentsOf: term.utf8)
        return key
    }

    static func tagKey(collection: String, tag: String) -> [UInt8] {
        var key = Keys.collectionPrefix(collection)
        key.append(tagMarker)
        key.append(contentsOf: tag.utf8)
        return key
    }

    private func insert(_ document: StoredDocument, collection: String, into buffer: inout PostingBuffer) {
        for (term, frequency) in document.terms {
            let posting = PostingBuffer.posting(docID: document.docID, frequency: frequency, length: document.length)
            buffer.add(posting, to: .init(collection: collection, text: term, isTag: false))
        }
        for tag in document.tags {
            buffer.add(PostingBuffer.posting(docID: document.docID, frequency: 0, length: 0), to: .init(collection: collection, text: tag, isTag: true))
        }
    }

    private func remove(_ document: StoredDocument, collection: String, from buffer: inout PostingBuffer) {
        for (term, frequency) in document.terms {
            let posting = PostingBuffer.posting(docID: document.docID, frequency: frequency, length: document.length)
            buffer.remove(posting, from: .init(collection: collection, text: term, isTag: false))
        }
        for tag in document.tags {
            buffer.remove(PostingBuffer.posting(docID: document.docID, frequency: 0, length: 0), from: .init(collection: collection, text: tag, isTag: true))
        }
    }
}

/// A document's entry in `search_docs`: what was indexed, so it can be removed exactly.
struct StoredDocument {
    var docID: UInt32
    var length: UInt32
    var terms: [(String, UInt16)]
    var tags: [String]

    static func docIDKey(_ docID: UInt32) -> [UInt8] {
        withUnsafeBytes(of: docID.bigEndian, Array.init)
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 16 + terms.count * 10)
        writer.write(bigEndian: docID)
        writer.write(varint: Int(length))
        writer.write(varint: terms.count)
        for (term, frequency) in terms {
            writer.write(string: term)
            writer.write(varint: Int(frequency))
        }
        writer.write(varint: tags.count)
        for tag in tags { writer.write(string: tag) }
        return writer.bytes
    }

    static func load(itemKey: [UInt8], tx: ReadTransaction, databases: ProjectionDatabases) throws -> StoredDocument? {
        try itemKey.withUnsafeBytes { key in
            guard let value = try tx.value(forKey: key, in: databases.searchDocs) else { return nil }
            var reader = ByteReader(value)
            let docID = try reader.readUInt32()
            let length = UInt32(truncatingIfNeeded: try reader.readVarint())
            let count = try reader.readCount(minimumBytesEach: 2)
            var terms: [(String, UInt16)] = []
            terms.reserveCapacity(count)
            // The index's own bytes, written from Swift strings: no UTF-8 validation needed (an
            // invalid byte would decode as U+FFFD, never crash).
            for _ in 0..<count {
                let term = try reader.readUncheckedString()
                terms.append((term, UInt16(truncatingIfNeeded: try reader.readVarint())))
            }
            let tagCount = try reader.readCount()
            var tags: [String] = []
            for _ in 0..<tagCount { tags.append(try reader.readUncheckedString()) }
            return StoredDocument(docID: docID, length: length, terms: terms, tags: tags)
        }
    }
}

/// Per-collection totals for BM25.
struct CollectionStats {
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
