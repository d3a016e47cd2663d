import LMDB

/// Typo tolerance: the index terms within a few edits of a query word, found by walking each
/// live segment's sorted term keys with an edit-distance table and skipping every key range
/// whose prefix is already too far from the word (one seek each), not by scanning all terms.
extension IndexReader {
    /// An index term close to a query word, with its lists and its edit distance.
    struct CloseTerm {
        var lists: TermLists
        var edits: Int
    }

    /// The terms of a collection within `maxEdits` (Damerau: insertion, deletion, substitution,
    /// swap of adjacent characters) of `word`, or — with `asPrefix` — that begin with something
    /// within `maxEdits` of it; at most `limit`, the fewest edits first, then in term order.
    /// Terms equal to `word` (or, with `asPrefix`, beginning with it) are left out: the exact
    /// match finds them.
    ///
    /// - Parameter collection: The collection's key prefix (``Keys/collectionPrefix(_:)``); each
    ///   found term's ``TermLists/term`` begins with it, as ``expand(prefix:limit:)``'s do.
    func closeTerms(collection: [UInt8], word: String, maxEdits: Int, asPrefix: Bool, limit: Int) throws -> [CloseTerm]
    {
        let target = Array(word.unicodeScalars)
        guard maxEdits > 0, !target.isEmpty else { return [] }
        var found: [ByteKey: (edits: Int, lists: [(segment: Int, list: UnsafeRawBufferPointer)])] = [:]
        var distance = EditDistance(target: target, maxEdits: maxEdits, asPrefix: asPrefix)
        try tx.withCursor(on: databases.searchSegments) { cursor in
            for (position, segment) in segments.enumerated() {
                let base = IndexKeys.segment(segment, collection)
                // Tags (`0x01 tag`) sort before every word: start after them.
                var entry = try (base + [IndexKeys.tagMarker + 1]).withUnsafeBytes { try cursor.seek(atLeast: $0) }
                while let current = entry, current.key.starts(with: base) {
                    let term = UnsafeRawBufferPointer(rebasing: current.key[(current.key.startIndex + base.count)...])
                    switch distance.evaluate(term) {
                    case .match(let edits):
                        let key = ByteKey(collection + Array(term))
                        var value = found[key] ?? (edits, [])
                        value.lists.append((position, current.value))
                        found[key] = value
                        entry = try cursor.next()
                    case .noMatch:
                        entry = try cursor.next()
                    case .deadAfter(let length):
                        // No key that begins with these bytes can match: seek past all of them.
                        guard let successor = IndexKey.successor(of: Array(term.prefix(length))) else {
                            entry = nil
                            break
                        }
                        entry = try (base + successor).withUnsafeBytes { try cursor.seek(atLeast: $0) }
                    }
                }
            }
        }
        return found.sorted { lhs, rhs in
            lhs.value.edits != rhs.value.edits ? lhs.value.edits < rhs.value.edits : lhs.key < rhs.key
        }
        .prefix(limit)
        .map { key, value in
            CloseTerm(
                lists: TermLists(term: key.bytes, lists: value.lists.sorted { $0.segment < $1.segment }.map(\.list)),
                edits: value.edits)
        }
    }
}
