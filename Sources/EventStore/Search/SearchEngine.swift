import Foundation
import LMDB

/// Answers queries from the inverted index: AND of the query terms, BM25 with field weights
/// (folded into the weighted term frequencies and lengths at index time), prefix expansion of
/// the last term, tag filters.
///
/// Each query term's postings are read across the live segments in doc-id order, skipping dead
/// documents, so its document frequency is exact for the live documents. The term with the
/// fewest postings drives: its documents are the candidates, and every other term is walked
/// alongside them in doc-id order.
struct SearchEngine {
    let reader: StoreReader
    let databases: ProjectionDatabases
    let tokenizer = Tokenizer()

    static let k1 = 1.2
    static let b = 0.75
    /// The most index terms one prefix expands to.
    static let maxExpansions = 64
    /// A hit of one collection: its doc id, its score and the edits its matched terms needed.
    struct Hit {
        var docID: UInt32
        var score: Double
        var typos: Int

        /// What orders hits, greatest first: fewer typos, then a greater score.
        var rank: Double { score - Double(typos) * 1e9 }
    }

    /// One query term (or tag) and the index terms it matches.
    struct Group {
        var terms: [IndexReader.TermLists]
        /// Per term: its edits from the query word (0 for the word and its prefix expansions).
        var edits: [Int]
        var estimate: Int
        var scored: Bool
        /// The group's place in the query: scores are summed in this order, so they do not depend
        /// on which group drives (which depends on dead postings not yet merged away).
        var position: Int
    }

    func search(_ query: SearchQuery) throws -> SearchPage {
        guard query.limit >= 0, query.offset >= 0 else { return SearchPage(results: [], total: 0, facets: [:]) }
        let page = try search(query, typos: query.typos == .always)
        // Automatic: close terms only when the words as written find nothing.
        guard query.typos == .automatic, page.total == 0 else { return page }
        return try search(query, typos: true)
    }

    private func search(_ query: SearchQuery, typos: Bool) throws -> SearchPage {
        var index = try IndexReader(tx: reader.tx, databases: databases)
        let collections = try query.collection.map { [$0] } ?? allCollections()
        var hits: [Hit] = []
        // The close terms typos matched, to mark them in highlights too.
        var closeTexts: Set<String> = []
        let text = QueryText(query.text, tokenizer: tokenizer)
        // Saturating: a page asked for with huge numbers wants every hit, it does not overflow.
        let (sum, overflow) = query.offset.addingReportingOverflow(query.limit)
        let wanted = overflow ? Int.max : sum
        // With a filter, hits the page needs may rank anywhere before filtering.
        let ranked = query.filter == nil ? wanted : nil
        for collection in collections {
            hits.append(
                contentsOf: try candidates(
                    query, text, in: collection, typos: typos, ranked: ranked, index: &index, closeTexts: &closeTexts))
        }
        var resolved: [(key: [UInt8], hit: Hit)] = []
        var facets = FacetCounter(fields: query.facets)
        let total: Int
        if query.filter != nil || !query.facets.isEmpty {
            // Every hit's values are read: to check the filter, to count the facets.
            let items = databases.items
            // Only the fields the filter and the facets read are decoded.
            var read = Set(query.facets)
            if let filter = query.filter { read.formUnion(filter.fields) }
            for hit in hits {
                guard let key = try index.itemKey(of: hit.docID),
                    let values = try key.withUnsafeBytes({ key in
                        try reader.tx.value(forKey: key, in: items).map {
                            try ItemValues(decodingRecord: $0, only: read)
                        }
                    }), values.exists
                else { continue }
                if let filter = query.filter, !filter.matches(values.fields) { continue }
                facets.count(values.fields)
                resolved.append((key, hit))
            }
            total = resolved.count
            if resolved.count > wanted {
                let threshold =
                    wanted == 0 ? .infinity : SearchEngine.kthLargest(resolved.lazy.map(\.hit.rank), k: wanted)
                resolved.removeAll { $0.hit.rank < threshold }
            }
        } else {
            total = hits.count
            // Every hit ranking at least the `wanted`-th best: ties at the cut are kept so the
            // order among equal ranks does not depend on doc ids (it is decided by item key).
            if wanted == 0 {
                hits = []
            } else if hits.count > wanted {
                let threshold = SearchEngine.kthLargest(hits.lazy.map(\.rank), k: wanted)
                hits.removeAll { $0.rank < threshold }
            }
            for hit in hits {
                guard let key = try index.itemKey(of: hit.docID) else { continue }
                resolved.append((key, hit))
            }
        }
        resolved.sort { lhs, rhs in
            lhs.hit.rank != rhs.hit.rank ? lhs.hit.rank > rhs.hit.rank : lhs.key.lexicographicallyPrecedes(rhs.key)
        }
        let page = resolved.dropFirst(query.offset).prefix(query.limit)
        var highlighter: Highlighter?
        if let options = query.highlights {
            var terms = text.terms
            if page.contains(where: { $0.hit.typos > 0 }) {
                terms += closeTexts.sorted().map { QueryTerm(text: $0, isPrefix: false) }
            }
            highlighter = Highlighter(tokenizer: tokenizer, terms: terms, options: options)
        }
        let items = databases.items
        let results = try page.compactMap { entry -> SearchResult? in
            guard
                let item = try entry.key.withUnsafeBytes({ key -> Item? in
                    let (collection, id) = try Keys.splitItem(key)
                    return try reader.tx.value(forKey: key, in: items).flatMap {
                        try ItemValues(decodingRecord: $0).item(collection: collection, id: id)
                    }
                })
            else { return nil }
            var result = SearchResult(item: item, score: entry.hit.score, typos: entry.hit.typos)
            if let highlighter { result.highlights = highlights(of: item, with: highlighter) }
            return result
        }
        return SearchPage(results: results, total: total, facets: facets.result(limit: query.facetLimit))
    }

    /// The highlights of an item's searchable fields (or the fields the options name): strings,
    /// and arrays of strings joined with commas.
    private func highlights(of item: Item, with highlighter: Highlighter) -> [String: Highlight] {
        let fields =
            highlighter.options.fields ?? reader.store.configuration.search.fields(for: item.collection).map(\.name)
        var highlights: [String: Highlight] = [:]
        for field in fields {
            let text: String
            switch item.fields[field] {
            case .string(let value)?: text = value
            case .array(let elements)?: text = elements.compactMap(\.stringValue).joined(separator: ", ")
            default: continue
            }
            highlights[field] = highlighter.highlight(text)
        }
        return highlights
    }

    /// The `k`-th largest of `scores` (`k` ≥ 1, at most their count), with a bounded min-heap:
    /// O(n log k) instead of sorting every hit to keep a page of them.
    static func kthLargest(_ scores: some Sequence<Double>, k: Int) -> Double {
        var heap: [Double] = []
        heap.reserveCapacity(k)
        func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                var smallest = left
                if left + 1 < heap.count && heap[left + 1] < heap[left] { smallest = left + 1 }
                guard heap[smallest] < heap[parent] else { return }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        for score in scores {
            if heap.count < k {
                heap.append(score)
                var child = heap.count - 1
                while child > 0 {
                    let parent = (child - 1) / 2
                    guard heap[child] < heap[parent] else { break }
                    heap.swapAt(child, parent)
                    child = parent
                }
            } else if score > heap[0] {
                heap[0] = score
                siftDown(0)
            }
        }
        return heap[0]
    }

    private func allCollections() throws -> [String] {
        try CollectionStats.collections(tx: reader.tx, db: databases.state)
    }

    /// One candidate's contribution from a query group: the edits of the term it matched (0:
    /// exactly) and its score; fewer edits win over a greater score.
    struct Match {
        var edits: Int
        var score: Double
        /// Where the matched term stands in the document (encoded, see ``PositionList``).
        var positions = UnsafeRawBufferPointer(start: nil, count: 0)
        /// Which of the group's terms matched (its place in the group's list): of two equal
        /// matches, the first term's is kept.
        var term = 0

        static var none: Match { Match(edits: .max, score: -1) }

        func isBetter(than other: Match) -> Bool {
            edits != other.edits ? edits < other.edits : score > other.score
        }
    }

    /// The hits of one collection. With `ranked`, proximity is scored for every hit that can
    /// still reach the best `ranked` (see ``rewardProximity(_:_:_:ranked:)``); `nil`: for all.
    private func candidates(
        _ query: SearchQuery, _ text: QueryText, in collection: String, typos: Bool, ranked: Int?,
        index: inout IndexReader, closeTexts: inout Set<String>
    ) throws -> [Hit] {
        let stats = try CollectionStats.load(collection, tx: reader.tx, db: databases.state)
        guard stats.documents > 0 else { return [] }
        let terms = text.terms
        let normalized = query.tags.map(tokenizer.normalizeTag)
        // A tag that normalizes to nothing is on no item (indexing skips empty tags): no hit.
        guard !normalized.contains(where: \.isEmpty) else { return [] }
        let tags = Set(normalized)
        guard !terms.isEmpty || !tags.isEmpty else { return [] }

        var groups: [Group] = []
        for term in terms {
            let key = IndexKeys.term(collection: collection, term: term.text)
            var keys =
                term.isPrefix
                ? try index.expand(prefix: key, limit: SearchEngine.maxExpansions) : [try index.lists(of: key)]
            var edits = [Int](repeating: 0, count: keys.count)
            if typos, let allowed = SearchEngine.allowedEdits(term.text) {
                let prefix = Keys.collectionPrefix(collection)
                for close in try index.closeTerms(
                    collection: prefix, word: term.text, maxEdits: allowed, asPrefix: term.isPrefix,
                    limit: SearchEngine.maxTypoExpansions, postingBudget: SearchEngine.typoPostingBudget,
                    cache: reader.store.searchTerms)
                {
                    keys.append(close.lists)
                    edits.append(close.edits)
                    closeTexts.insert(String(decoding: close.lists.term.dropFirst(prefix.count), as: UTF8.self))
                }
            }
            let estimate = try keys.reduce(0) { $0 + (try $1.estimatedFrequency()) }
            guard estimate > 0 else { return [] }
            groups.append(Group(terms: keys, edits: edits, estimate: estimate, scored: true, position: groups.count))
        }
        for tag in tags.sorted(by: utf8Less) {
            let key = try index.lists(of: IndexKeys.tag(collection: collection, tag: tag))
            let estimate = try key.estimatedFrequency()
            guard estimate > 0 else { return [] }
            groups.append(Group(terms: [key], edits: [0], estimate: estimate, scored: false, position: groups.count))
        }
        groups.sort { $0.estimate < $1.estimate }

        let documents = Double(stats.documents)
        let average = stats.averageLength
        func idf(_ frequency: Int) -> Double {
            log(1 + (documents - Double(frequency) + 0.5) / (Double(frequency) + 0.5))
        }
        func score(_ posting: Posting, idf: Double) -> Double {
            let weighted = Double(posting.frequency)
            let norm = SearchEngine.k1 * (1 - SearchEngine.b + SearchEngine.b * Double(posting.length) / average)
            return idf * weighted * (SearchEngine.k1 + 1) / (weighted + norm)
        }

        // The driver: the live documents of the group with the fewest postings, in doc-id order;
        // with a prefix or close terms, a document may hold several and takes its best one.
        // `contributions[g][c]`: what query group `g` gives candidate `c`.
        let driver = groups[0]
        var runs: [Run] = []
        for (term, (lists, edits)) in zip(driver.terms, driver.edits).enumerated() {
            let postings = try index.livePostings(in: lists)
            let weight = idf(postings.count)
            runs.append(
                Run(
                    ids: postings.map(\.docID),
                    matches: postings.map { posting in
                        Match(
                            edits: edits, score: driver.scored ? score(posting, idf: weight) : 0,
                            positions: posting.positions, term: term)
                    }))
        }
        let union = SearchEngine.union(runs)
        var ids = union.ids
        var contributions = [[Match]](repeating: [], count: groups.count)
        contributions[driver.position] = union.matches
        // Every other group must match too: walk its postings alongside the candidates.
        for group in groups.dropFirst() where !ids.isEmpty {
            var best = [Match](repeating: .none, count: ids.count)
            for (term, edits) in zip(group.terms, group.edits) {
                var matches: [(candidate: Int, posting: Posting)] = []
                var position = 0
                let frequency = try index.forEachLivePosting(in: term) { posting in
                    while position < ids.count && ids[position] < posting.docID { position += 1 }
                    if position < ids.count && ids[position] == posting.docID { matches.append((position, posting)) }
                }
                let weight = idf(frequency)
                for found in matches {
                    let match = Match(
                        edits: edits, score: group.scored ? score(found.posting, idf: weight) : 0,
                        positions: found.posting.positions)
                    if match.isBetter(than: best[found.candidate]) { best[found.candidate] = match }
                }
            }
            let kept = ids.indices.filter { best[$0].edits != .max }
            ids = kept.map { ids[$0] }
            for other in contributions.indices where !contributions[other].isEmpty {
                contributions[other] = kept.map { contributions[other][$0] }
            }
            contributions[group.position] = kept.map { best[$0] }
        }
        if !text.phrases.isEmpty {
            let kept = try holdingPhrases(text, groups: groups, ids: ids, contributions: contributions)
            ids = kept.map { ids[$0] }
            for group in contributions.indices where !contributions[group].isEmpty {
                contributions[group] = kept.map { contributions[group][$0] }
            }
        }
        var hits = ids.indices.map { candidate in
            var hit = Hit(docID: ids[candidate], score: 0, typos: 0)
            for group in contributions where !group.isEmpty {
                hit.score += group[candidate].score
                hit.typos += group[candidate].edits
            }
            return hit
        }
        if terms.count > 1 {
            try rewardProximity(&hits, terms.count, { contributions[$0][$1].positions }, ranked: ranked)
        }
        return hits
    }
}

extension StoreReader {
    /// Searches the offline full-text index.
    ///
    /// - Returns: Items best first, with their scores (and highlights, when the query asks).
    ///   Deleted items never appear.
    public func search(_ query: SearchQuery) throws -> [SearchResult] {
        try searchPage(query).results
    }

    /// Searches the offline full-text index, and counts the hits and their facets.
    ///
    /// ```swift
    /// var query = SearchQuery("sync", collection: "notes", facets: ["tags"])
    /// let page = try reader.searchPage(query)
    /// print(page.total, page.facets["tags"]?.map { "\($0.value) (\($0.count))" } ?? [])
    /// ```
    ///
    /// With a ``SearchQuery/filter`` or ``SearchQuery/facets``, every hit's item is read (the
    /// cost grows with the hits, not with the page).
    public func searchPage(_ query: SearchQuery) throws -> SearchPage {
        try SearchEngine(reader: self, databases: try projection).search(query)
    }
}

extension Store {
    /// Searches the offline full-text index (see ``SearchQuery``).
    public func search(_ query: SearchQuery) throws -> [SearchResult] {
        try read { try $0.search(query) }
    }

    /// Searches the offline full-text index, and counts the hits and their facets (see
    /// ``StoreReader/searchPage(_:)``).
    public func searchPage(_ query: SearchQuery) throws -> SearchPage {
        try read { try $0.searchPage(query) }
    }

    /// Searches one collection, or all, for `text`.
    public func search(_ text: String, in collection: String? = nil, limit: Int = 20) throws -> [SearchResult] {
        try search(SearchQuery(text, collection: collection, limit: limit))
    }
}
