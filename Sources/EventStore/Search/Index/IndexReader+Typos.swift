/// Typo tolerance: the index terms within a few edits of a query word, found by walking each
/// live segment's sorted terms with an edit-distance table and skipping every range of terms
/// whose beginning is already too far from the word (a binary search each), not by comparing
/// the word with every term. The terms are the live segments' union, from a
/// ``SegmentTermCache`` (each segment's read once, the union made once per set of segments).
extension IndexReader {
    /// An index term close to a query word, with its lists and its edit distance.
    struct CloseTerm {
        var lists: TermLists
        var edits: Int
    }

    /// The terms of a collection within `maxEdits` (Damerau: insertion, deletion, substitution,
    /// swap of adjacent characters) of `word`, or — with `asPrefix` — that begin with something
    /// within `maxEdits` of it. Of the first `limit` by edits (then term order), the fewest edits
    /// come first, then the most frequent, as long as their postings together stay within
    /// `postingBudget` (the first is always kept): the likeliest corrections, at a bounded cost.
    /// Terms equal to `word` (or, with `asPrefix`, beginning with it) are left out: the exact
    /// match finds them; so are terms whose documents all died (they take none of the `limit`).
    ///
    /// - Parameter collection: The collection's key prefix (``Keys/collectionPrefix(_:)``); each
    ///   found term's ``TermLists/term`` begins with it, as ``expand(prefix:limit:)``'s do.
    mutating func closeTerms(
        collection: [UInt8], word: String, maxEdits: Int, asPrefix: Bool, limit: Int, postingBudget: Int = .max,
        cache: SegmentTermCache = SegmentTermCache()
    ) throws -> [CloseTerm] {
        let target = Array(word.unicodeScalars)
        guard maxEdits > 0, !target.isEmpty else { return [] }
        var found: [ByteKey: Int] = [:]
        var distance = EditDistance(target: target, maxEdits: maxEdits, asPrefix: asPrefix)
        let database = databases.searchSegments
        let terms = try cache.vocabulary(of: termParts(), in: database) { part in
            try SegmentTerms.load(part.segment.id, tx: tx, database: database)
        }
        terms.forEachWord(of: collection) { term in
            switch distance.evaluate(term) {
            case .match(let edits):
                found[ByteKey(collection + Array(term))] = edits
                return nil
            case .noMatch:
                return nil
            case .deadAfter(let length):
                return length
            }
        }
        var chosen: [(term: CloseTerm, postings: Int)] = []
        for (key, edits) in found.sorted(by: { lhs, rhs in
            lhs.value != rhs.value ? lhs.value < rhs.value : lhs.key < rhs.key
        }) {
            guard chosen.count < limit else { break }
            var lists = try lists(of: key.bytes)
            lists.lists = try lists.lists.filter { try dead.hasLive(in: $0) }
            guard !lists.lists.isEmpty else { continue }
            chosen.append((CloseTerm(lists: lists, edits: edits), try lists.estimatedFrequency()))
        }
        let candidates = chosen.sorted { lhs, rhs in
            lhs.term.edits != rhs.term.edits ? lhs.term.edits < rhs.term.edits : lhs.postings > rhs.postings
        }
        var taken: [CloseTerm] = []
        var postings = 0
        for candidate in candidates {
            if !taken.isEmpty && postings + candidate.postings > postingBudget { continue }
            taken.append(candidate.term)
            postings += candidate.postings
        }
        return taken
    }

    /// What each readable segment's terms depend on, for the ``SegmentTermCache``: its entry and,
    /// for the inputs and the output of a merge that moves terms, the last term moved.
    private func termParts() -> [SegmentTermCache.Part] {
        let moving = movingMerge.map { Set($0.inputs + [$0.output]) } ?? []
        return readableSegments.map { segment in
            SegmentTermCache.Part(
                segment: segment, movedThrough: moving.contains(segment.id) ? movingMerge?.resumeAfter : nil)
        }
    }
}
