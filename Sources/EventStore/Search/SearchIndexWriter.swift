import LMDB

/// Turns item states into search documents and keeps the index current as items change.
///
/// Every change of an item's searchable content retires its current document (its doc id is
/// marked dead) and adds the new content as a new document under a new, greater doc id; the
/// postings are written at the checkpoint as one segment (``SearchIndexChanges``). Nothing is
/// removed in place, so a write costs about the postings it adds, whatever the index's size.
/// See the Full-text search and Storage format articles for the layout.
struct SearchIndexWriter {
    let configuration: SearchConfiguration
    let tokenizer = Tokenizer()

    /// A document as indexed: its weighted terms, its tags and its weighted length.
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
        collection: String, itemKey: [UInt8], before: ItemState, after: ItemState, tx: ReadTransaction,
        databases: ProjectionDatabases, changes: inout SearchIndexChanges
    ) throws {
        if searchableContentEqual(collection: collection, before, after) { return }
        try changes.retire(itemKey: itemKey, collection: collection, tx: tx, databases: databases)
        if let document = document(collection: collection, state: after) {
            try changes.add(document, itemKey: itemKey, collection: collection, tx: tx, databases: databases)
        }
    }
}
