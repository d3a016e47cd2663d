import LMDB

/// What one transaction changes in the search index, kept in memory and written at the
/// checkpoint as one segment plus a few small updates:
///
/// 1. doc ids that died → one bitmap chunk each (``DeadDocuments``, in `state`);
/// 2. collection totals (``CollectionStats``, in `state`);
/// 3. the new documents (`search_documents`), appended in doc-id order;
/// 4. their postings (with their terms' positions), sorted by term, appended as a new segment
///    (`search_segments`);
/// 5. merge and clean-up work: each commit earns a budget proportional to the postings it
///    wrote, spent once 2,048 units have accumulated.
///
/// Each item's current doc id is written with the item itself (``ItemRecord``), by the
/// projection writer. A document created and replaced within the transaction never reaches the
/// disk.
struct SearchIndexChanges {
    private struct NewDocument {
        var docID: UInt32
        var collection: String
        var itemKey: [UInt8]
        var document: SearchIndexWriter.Document
        var alive: Bool
    }

    /// The terms of the transaction's new documents (see
    /// ``SearchIndexWriter/document(collection:state:terms:positions:)``).
    var terms = TermTable()
    /// The positions of the transaction's new documents' terms.
    var positions = PositionCollector()
    private var directory: SegmentDirectory?
    private var loadedDirectory: SegmentDirectory?
    private var stats: [String: CollectionStats] = [:]
    /// The documents added by the transaction, under consecutive doc ids.
    private var newDocuments: [NewDocument] = []
    private var dead: [UInt32] = []

    /// Merge work allowed per posting written, and at least per commit that changed the index.
    static let mergeWorkPerPosting = 8
    static let minimumMergeWork = 256
    /// Earned merge work is spent when it reaches this much (about every eighth small commit).
    static let mergeThreshold: UInt64 = 2_048

    private mutating func loadDirectory(tx: ReadTransaction, databases: ProjectionDatabases) throws -> SegmentDirectory
    {
        if let directory { return directory }
        let loaded = try SegmentDirectory.load(tx: tx, state: databases.state)
        directory = loaded
        loadedDirectory = loaded
        return loaded
    }

    private mutating func adjustStats(
        _ collection: String, documents: Int64, length: Int64, tx: ReadTransaction, databases: ProjectionDatabases
    ) throws {
        var current = try stats[collection] ?? CollectionStats.load(collection, tx: tx, db: databases.state)
        current.documents = UInt64(Int64(current.documents) + documents)
        current.totalLength = UInt64(Int64(current.totalLength) + length)
        stats[collection] = current
    }

    /// The search document of an item state (see
    /// ``SearchIndexWriter/document(collection:state:terms:positions:)``), its terms and positions
    /// kept for this transaction's segment.
    mutating func document(of state: ItemState, collection: String, writer: SearchIndexWriter) -> SearchIndexWriter
        .Document?
    {
        writer.document(collection: collection, state: state, terms: &terms, positions: &positions)
    }

    /// Marks an item's current document `docID` dead (nothing for 0).
    mutating func retire(_ docID: UInt32, collection: String, tx: ReadTransaction, databases: ProjectionDatabases)
        throws
    {
        guard docID != 0 else { return }
        if let first = newDocuments.first?.docID, docID >= first {
            let index = Int(docID - first)
            guard index < newDocuments.count, newDocuments[index].alive else {
                throw EventStoreError(.corrupt, "search index: document \(docID) of an item is not current")
            }
            newDocuments[index].alive = false
            try adjustStats(
                collection, documents: -1, length: -Int64(newDocuments[index].document.length), tx: tx,
                databases: databases)
            return
        }
        guard let stored = try IndexedDocument.load(docID, tx: tx, database: databases.searchDocuments) else {
            throw EventStoreError(.corrupt, "search index: document \(docID) of an item is missing")
        }
        dead.append(docID)
        try adjustStats(collection, documents: -1, length: -Int64(stored.length), tx: tx, databases: databases)
    }

    /// Adds `document` as the item's current version, under a new doc id, and returns that id.
    mutating func add(
        _ document: SearchIndexWriter.Document, itemKey: [UInt8], collection: String, tx: ReadTransaction,
        databases: ProjectionDatabases
    ) throws -> UInt32 {
        var directory = try loadDirectory(tx: tx, databases: databases)
        let docID = try directory.allocateDocID()
        self.directory = directory
        newDocuments.append(
            NewDocument(docID: docID, collection: collection, itemKey: itemKey, document: document, alive: true))
        try adjustStats(collection, documents: 1, length: Int64(document.length), tx: tx, databases: databases)
        return docID
    }

    /// Writes everything and runs the merge work this commit pays for.
    mutating func flush(tx: WriteTransaction, databases: ProjectionDatabases) throws {
        guard directory != nil || !dead.isEmpty || !stats.isEmpty else { return }
        var directory = try loadDirectory(tx: tx, databases: databases)
        if !dead.isEmpty { try DeadDocuments.mark(dead, tx: tx, database: databases.state) }
        for (collection, value) in stats { try value.save(collection, tx: tx, db: databases.state) }

        let alive = newDocuments.filter(\.alive)
        var postingsWritten = 0
        if let first = alive.first, let last = alive.last {
            for entry in alive {
                try tx.put(
                    IndexedDocument(length: entry.document.length, itemKey: entry.itemKey).encoded(),
                    forKey: IndexKeys.document(entry.docID), in: databases.searchDocuments, options: .append)
            }
            let segment = try directory.allocateSegmentID()
            postingsWritten = try writeSegment(segment, of: alive, tx: tx, databases: databases)
            directory.segments.append(
                .init(id: segment, firstDoc: first.docID, lastDoc: last.docID, postings: UInt64(postingsWritten)))
        }
        // Merge work is earned per posting written and spent once enough has accumulated, so
        // most small commits touch no merge pages at all.
        directory.credit += UInt64(
            max(SearchIndexChanges.minimumMergeWork, postingsWritten * SearchIndexChanges.mergeWorkPerPosting))
        if directory.credit >= SearchIndexChanges.mergeThreshold {
            let budget = Int(clamping: directory.credit)
            directory.credit = 0
            try SegmentMerger(tx: tx, databases: databases).run(budget: budget, directory: &directory)
        }
        if directory != loadedDirectory { try directory.save(tx: tx, state: databases.state) }
        self = SearchIndexChanges()
    }

    /// A posting on its way into a segment, with what it is sorted by.
    private struct SegmentPosting {
        var docID: UInt32
        var frequency: UInt32
        var length: UInt32
        /// Its positions in ``PositionCollector/arena``.
        var positions: Range<Int>
        var term: UInt32
        var collection: Int32
    }

    /// Writes the postings of `documents` (in doc-id order) as segment `segment`: per collection,
    /// per term (a tag as `0x01 tag`) in key order, the postings in doc-id order, the lists of
    /// adjacent terms packed into ``SegmentEntry`` blocks. Returns the number of postings written.
    ///
    /// The postings are put in order by two stable counting sorts (by term rank, then by
    /// collection), which keeps each list in doc-id order without comparing any bytes but the
    /// distinct terms'.
    private func writeSegment(
        _ segment: UInt32, of documents: [NewDocument], tx: WriteTransaction, databases: ProjectionDatabases
    ) throws -> Int {
        let ranks = terms.ranks()
        let collections = Set(documents.map(\.collection)).sorted(by: utf8Less)
        let collectionNumbers = Dictionary(uniqueKeysWithValues: collections.enumerated().map { ($1, Int32($0)) })
        var offsets = [Int](repeating: 0, count: terms.count + 1)
        for entry in documents {
            for term in entry.document.terms { offsets[Int(ranks[Int(term.number)]) + 1] += 1 }
            for tag in entry.document.tags { offsets[Int(ranks[Int(tag)]) + 1] += 1 }
        }
        for rank in 0..<terms.count { offsets[rank + 1] += offsets[rank] }
        let total = offsets[terms.count]
        let empty = SegmentPosting(docID: 0, frequency: 0, length: 0, positions: 0..<0, term: 0, collection: 0)
        var byTerm = [SegmentPosting](repeating: empty, count: total)
        for entry in documents {
            let collection = collectionNumbers[entry.collection]!
            func place(_ term: UInt32, _ posting: SegmentPosting) {
                let rank = Int(ranks[Int(term)])
                byTerm[offsets[rank]] = posting
                offsets[rank] += 1
            }
            for term in entry.document.terms {
                place(
                    term.number,
                    SegmentPosting(
                        docID: entry.docID, frequency: term.frequency, length: entry.document.length,
                        positions: term.positions, term: term.number, collection: collection))
            }
            for tag in entry.document.tags {
                place(
                    tag,
                    SegmentPosting(
                        docID: entry.docID, frequency: 0, length: 0, positions: 0..<0, term: tag, collection: collection
                    ))
            }
        }
        var sorted = byTerm
        if collections.count > 1 {
            var starts = [Int](repeating: 0, count: collections.count + 1)
            for entry in byTerm { starts[Int(entry.collection) + 1] += 1 }
            for index in 0..<collections.count { starts[index + 1] += starts[index] }
            for entry in byTerm {
                sorted[starts[Int(entry.collection)]] = entry
                starts[Int(entry.collection)] += 1
            }
        }

        let prefixes = collections.map { Keys.collectionPrefix($0) }
        var writer = ByteWriter(capacity: 256)
        var builder = PostingList.Builder(positions: true)
        var entries = SegmentEntry.Builder(segment: segment)
        let put = { (key: [UInt8], value: [UInt8]) in
            _ = try tx.put(value, forKey: key, in: databases.searchSegments, options: .append)
        }
        var key: [UInt8] = []
        var runStart = 0
        try positions.arena.bytes.withUnsafeBytes { arena in
            while runStart < sorted.count {
                let term = sorted[runStart].term
                let collection = sorted[runStart].collection
                var runEnd = runStart + 1
                while runEnd < sorted.count && sorted[runEnd].term == term && sorted[runEnd].collection == collection {
                    runEnd += 1
                }
                key.removeAll(keepingCapacity: true)
                key.append(contentsOf: prefixes[Int(collection)])
                let tag = terms.withBytes(of: term) { bytes in
                    key.append(contentsOf: bytes)
                    return bytes.first == IndexKeys.tagMarker
                }
                // Words carry their positions; tags have none.
                builder.removeAll(positions: !tag)
                for entry in sorted[runStart..<runEnd] {
                    builder.append(
                        Posting(
                            docID: entry.docID, frequency: entry.frequency, length: entry.length,
                            positions: UnsafeRawBufferPointer(rebasing: arena[entry.positions])))
                }
                writer.bytes.removeAll(keepingCapacity: true)
                builder.encode(into: &writer)
                try key.withUnsafeBytes { key in
                    try writer.bytes.withUnsafeBytes { try entries.add(term: key, list: $0, put: put) }
                }
                runStart = runEnd
            }
        }
        try entries.flush(put: put)
        return sorted.count
    }
}
