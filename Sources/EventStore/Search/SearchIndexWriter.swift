import LMDB

/// Turns item states into search documents and keeps the index current as items change.
///
/// Every change of an item's searchable content retires its current document (its doc id is
/// marked dead) and adds the new content as a new document under a new, greater doc id; the
/// postings are written at the checkpoint as one segment (``SearchIndexChanges``). Nothing is
/// removed in place, so a write costs about the postings it adds, whatever the index's size.
/// See the Full-text search and Storage format articles for the layout.
struct SearchIndexWriter: Sendable {
    let configuration: SearchConfiguration
    let tokenizer = Tokenizer()
    /// New documents a transaction hands to the tokenizer thread at a time (see
    /// ``SearchIndexChanges``).
    let tokenizerChunk: Int

    /// A writer for `configuration`, in its canonical form: fields are indexed in the order of
    /// their names, so that term positions do not depend on the order they were declared in.
    init(configuration: SearchConfiguration, tokenizerChunk: Int) {
        self.configuration = configuration.canonical
        self.tokenizerChunk = max(1, tokenizerChunk)
    }

    /// A document as indexed: its weighted terms and its tags, as numbers of the transaction's
    /// ``TermTable``, and its weighted length.
    struct Document {
        /// A term of the document, its weighted frequency there, and where its encoded positions
        /// are in the transaction's ``PositionCollector/arena``.
        struct Term {
            var number: UInt32
            var frequency: UInt32
            var positions: Range<Int> = 0..<0
        }
        /// In order of first appearance, each term once.
        var terms: [Term] = []
        /// Tag terms (`0x01 tag`, see ``IndexKeys/tagTerm(_:)``), each once.
        var tags: [UInt32] = []
        var length: UInt32 = 0
    }

    /// The searchable text of an item state, taken out of it so that it can be tokenized later,
    /// on another thread (``DocumentTokenizer``), or `nil` when nothing is searchable.
    func text(collection: String, state: ItemState) -> DocumentText? {
        guard state.exists else { return nil }
        let fields = configuration.fields(for: collection)
        guard !fields.isEmpty else { return nil }
        var text = DocumentText()
        text.fields.reserveCapacity(fields.count)
        for field in fields {
            guard let value = state.value(of: field.name) else { continue }
            text.fields.append(DocumentText.Field(weight: UInt32(field.weight), value: value))
        }
        text.tags = state.value(of: configuration.tagField)
        return text
    }

    /// The document of `text`: its terms are added to `table`, their positions to `positions`.
    func document(of text: DocumentText, terms table: inout TermTable, positions: inout PositionCollector) -> Document {
        var document = Document()
        // Room for a typical document's distinct terms at once, rather than growing the array
        // through every power of two.
        document.terms.reserveCapacity(64)
        table.beginDocument()
        var counter = PositionCounter()
        for field in text.fields {
            let weight = field.weight
            forEachString(in: field.value) { text in
                // One unused word between strings: no phrase spans two fields or elements.
                counter.skipWord()
                _ = tokenizer.scan(text) { term, kind in
                    let (number, index) = table.occurrence(of: term)
                    let position = counter.advance(kind)
                    if let index {
                        document.terms[index].frequency += weight
                        positions.record(term: index, at: position)
                    } else {
                        table.setIndex(document.terms.count, of: number)
                        positions.record(term: document.terms.count, at: position)
                        document.terms.append(Document.Term(number: number, frequency: weight))
                    }
                    document.length += weight
                }
            }
        }
        positions.finishDocument(terms: document.terms.count) { term, range in document.terms[term].positions = range }
        if let tags = text.tags {
            var term: [UInt8] = []
            forEachString(in: tags) { tag in
                let normalized = tokenizer.normalizeTag(tag)
                guard !normalized.isEmpty else { return }
                term.removeAll(keepingCapacity: true)
                term.append(IndexKeys.tagMarker)
                term.append(contentsOf: normalized.utf8)
                let (number, index) = term.withUnsafeBytes { table.occurrence(of: $0) }
                if index == nil {
                    table.setIndex(0, of: number)
                    document.tags.append(number)
                }
            }
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
        for field in configuration.fields(for: collection) where lhs.value(of: field.name) != rhs.value(of: field.name)
        {
            return false
        }
        return lhs.value(of: configuration.tagField) == rhs.value(of: configuration.tagField)
    }

    /// Re-indexes one item after a change from `before`, whose search document is `document`, to
    /// `after`.
    ///
    /// - Returns: The item's search document after the change (0 for none).
    func update(
        collection: String, itemKey: [UInt8], before: ItemState, document: UInt32, after: ItemState,
        tx: ReadTransaction, databases: ProjectionDatabases, changes: inout SearchIndexChanges
    ) throws -> UInt32 {
        if searchableContentEqual(collection: collection, before, after) { return document }
        try changes.retire(document, collection: collection, tx: tx, databases: databases)
        guard let text = text(collection: collection, state: after) else { return 0 }
        return try changes.add(
            text, writer: self, itemKey: itemKey, collection: collection, tx: tx, databases: databases)
    }
}
