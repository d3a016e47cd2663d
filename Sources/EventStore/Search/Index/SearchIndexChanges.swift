import LMDB

/// What one transaction changes in the search index, kept in memory and written at the
/// checkpoint as one segment plus a few small updates:
///
/// 1. doc ids that died → one bitmap chunk each (``DeadDocuments``, in `state`);
/// 2. collection totals (``CollectionStats``, in `state`);
/// 3. the new documents (`search_documents`), appended in doc-id order;
/// 4. their postings (with their terms' positions), sorted by term, appended as a new segment
///    (`search_segments`). The documents' texts are tokenized in the order they were added: by
///    the writer at the checkpoint when the transaction added fewer than
///    ``SearchIndexWriter/tokenizerChunk`` (16), otherwise on another thread while the
///    transaction goes on (``DocumentTokenizer``);
/// 5. merge and clean-up work: each commit earns a budget proportional to the postings it
///    wrote, spent once 2,048 units have accumulated; in the store's commits, on merge steps
///    computed ahead (``MergeAhead``).
///
/// Each item's current doc id is written with the item itself (``ItemRecord``), by the
/// projection writer. A document created and replaced within the transaction never reaches the
/// disk.
struct SearchIndexChanges {
    private struct NewDocument {
        var docID: UInt32
        var collection: String
        var itemKey: [UInt8]
        var alive: Bool
    }

    /// The texts of new documents not yet handed to ``tokenizer`` (all of them while it is `nil`).
    private var texts: [DocumentText] = []
    /// How many new documents' texts went to ``tokenizer``: the first ones of ``newDocuments``.
    private var tokenizing = 0
    /// Tokenizes on another thread once the transaction has added
    /// ``SearchIndexWriter/tokenizerChunk`` documents.
    private var tokenizer: DocumentTokenizer?
    private var writer: SearchIndexWriter?
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
        // Totals read from the store: damaged ones are corrupt, never a trap.
        func adjusted(_ total: UInt64, by change: Int64) throws -> UInt64 {
            guard total <= UInt64(Int64.max), case let (sum, overflow) = Int64(total).addingReportingOverflow(change),
                !overflow, sum >= 0
            else {
                throw ByteReader.corrupt(
                    "search statistics of \(collection) (a total of \(total), changed by \(change))")
            }
            return UInt64(sum)
        }
        current.documents = try adjusted(current.documents, by: documents)
        current.totalLength = try adjusted(current.totalLength, by: length)
        stats[collection] = current
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
            // Not counted in the collection's totals yet: the checkpoint counts the live ones.
            newDocuments[index].alive = false
            return
        }
        guard let stored = try IndexedDocument.load(docID, tx: tx, database: databases.searchDocuments) else {
            throw EventStoreError(.corrupt, "search index: document \(docID) of an item is missing")
        }
        dead.append(docID)
        try adjustStats(collection, documents: -1, length: -Int64(stored.length), tx: tx, databases: databases)
    }

    /// Adds a document of `text` (``SearchIndexWriter/text(collection:state:)``) as the item's
    /// current version, under a new doc id, and returns that id. The text is tokenized later
    /// (see ``SearchIndexWriter/tokenizerChunk``).
    mutating func add(
        _ text: DocumentText, writer: SearchIndexWriter, itemKey: [UInt8], collection: String, tx: ReadTransaction,
        databases: ProjectionDatabases
    ) throws -> UInt32 {
        var directory = try loadDirectory(tx: tx, databases: databases)
        let docID = try directory.allocateDocID()
        self.directory = directory
        self.writer = writer
        newDocuments.append(NewDocument(docID: docID, collection: collection, itemKey: itemKey, alive: true))
        texts.append(text)
        if texts.count >= writer.tokenizerChunk { handTextsOver(writer) }
        return docID
    }

    /// Hands the pending texts to the tokenizer, starting it when needed: on a thread of its own
    /// during the transaction, on this thread at the checkpoint.
    private mutating func handTextsOver(_ writer: SearchIndexWriter, onThread: Bool = true) {
        let tokenizer = self.tokenizer ?? DocumentTokenizer(writer: writer, onThread: onThread)
        self.tokenizer = tokenizer
        tokenizer.submit(texts, after: tokenizing)
        tokenizing += texts.count
        texts.removeAll()
    }

    /// Writes everything and runs the merge work this commit pays for, then forgets the changes.
    ///
    /// The writing works on a copy: a flush that throws leaves the changes as they were, so that
    /// flushing them again counts nothing twice (the tokenizer drops what the failed flush handed
    /// it, see ``DocumentTokenizer``).
    ///
    /// - Parameter ahead: Computes the merges' steps between commits (``MergeAhead``); without
    ///   it, this commit computes them.
    mutating func flush(tx: WriteTransaction, databases: ProjectionDatabases, ahead: MergeAhead? = nil) throws {
        var changes = self
        try changes.write(tx: tx, databases: databases, ahead: ahead)
        self = SearchIndexChanges()
    }

    private mutating func write(tx: WriteTransaction, databases: ProjectionDatabases, ahead: MergeAhead?) throws {
        guard directory != nil || !dead.isEmpty || !stats.isEmpty else { return }
        var directory = try loadDirectory(tx: tx, databases: databases)
        if !dead.isEmpty { try DeadDocuments.mark(dead, tx: tx, database: databases.state) }

        // The new documents are tokenized by now (on the tokenizer thread, or here for a few);
        // those still alive count in their collections' totals, their lengths known.
        if let writer, !texts.isEmpty { handTextsOver(writer, onThread: false) }
        var documents: [NewSegment.Document] = []
        if let tokenizer {
            let tokenized = tokenizer.finish(count: tokenizing)
            precondition(tokenized.count == newDocuments.count, "every new document is tokenized once")
            for (entry, document) in zip(newDocuments, tokenized) where entry.alive {
                try adjustStats(
                    entry.collection, documents: 1, length: Int64(document.length), tx: tx, databases: databases)
                try tx.put(
                    IndexedDocument(length: document.length, itemKey: entry.itemKey).encoded(),
                    forKey: IndexKeys.document(entry.docID), in: databases.searchDocuments, options: .append)
                documents.append(
                    NewSegment.Document(docID: entry.docID, collection: entry.collection, document: document))
            }
        }
        for (collection, value) in stats { try value.save(collection, tx: tx, db: databases.state) }
        let postings = documents.reduce(0) { $0 + $1.document.terms.count + $1.document.tags.count }
        // The tokenizer encodes the new segment, on its thread while this one merges older
        // segments: the new segment joins the directory (and later merges) after the merge work.
        if !documents.isEmpty { tokenizer?.encodeSegment(of: documents) }

        // Merge work is earned per posting written and spent once enough has accumulated, so
        // most small commits touch no merge pages at all. What a merge waiting for its step
        // (computed ahead) leaves unspent stays earned.
        let earned = max(SearchIndexChanges.minimumMergeWork, postings * SearchIndexChanges.mergeWorkPerPosting)
        ahead?.expect(earned)
        directory.credit += UInt64(earned)
        if directory.credit >= SearchIndexChanges.mergeThreshold {
            let budget = Int(clamping: directory.credit)
            let unspent = try SegmentMerger(tx: tx, databases: databases).run(
                budget: budget, directory: &directory, ahead: ahead)
            // Commits earn more than merges usually need (they stop when the policy wants no
            // merge), so what waits is capped at what one step can do.
            directory.credit = UInt64(min(max(0, unspent), MergeStep.maximumWork))
        }

        if let tokenizer, let first = documents.first, let last = documents.last {
            let segment = tokenizer.encodedSegment()
            precondition(segment.postings == postings, "a segment holds every posting of its documents")
            let id = try directory.allocateSegmentID()
            try segment.write(as: id, tx: tx, database: databases.searchSegments)
            directory.segments.append(
                .init(id: id, firstDoc: first.docID, lastDoc: last.docID, postings: UInt64(postings)))
        }
        if directory != loadedDirectory { try directory.save(tx: tx, state: databases.state) }
    }
}
