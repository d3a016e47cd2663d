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

    /// One query term (or tag) and the index terms it matches.
    private struct Group {
        var terms: [IndexReader.TermLists]
        var estimate: Int
        var scored: Bool
        /// The group's place in the query: scores are summed in this order, so they do not depend
        /// on which group drives (which depends on dead postings not yet merged away).
        var position: Int
    }

    func search(_ query: SearchQuery) throws -> SearchPage {
        guard query.limit >= 0, query.offset >= 0 else { return SearchPage(results: [], total: 0, facets: [:]) }
        var index = try IndexReader(tx: reader.tx, databases: databases)
        let collections = try query.collection.map { [$0] } ?? allCollections()
        var hits: [(docID: UInt32, score: Double)] = []
        for collection in collections {
            hits.append(contentsOf: try candidates(query, in: collection, index: &index))
        }
        var resolved: [(key: [UInt8], score: Double)] = []
        var facets = FacetCounter(fields: query.facets)
        let total: Int
        if query.filter != nil || !query.facets.isEmpty {
            // Every hit's values are read: to check the filter, to count the facets.
            let items = databases.items
            // Only the fields the filter and the facets read are decoded.
            var wanted = Set(query.facets)
            if let filter = query.filter { wanted.formUnion(filter.fields) }
            for hit in hits {
                guard let key = try index.itemKey(of: hit.docID),
                    let values = try key.withUnsafeBytes({ key in
                        try reader.tx.value(forKey: key, in: items).map {
                            try ItemValues(decodingRecord: $0, only: wanted)
                        }
                    }), values.exists
                else { continue }
                if let filter = query.filter, !filter.matches(values.fields) { continue }
                facets.count(values.fields)
                resolved.append((key, hit.score))
            }
            total = resolved.count
            let wantedResults = query.offset + query.limit
            if resolved.count > wantedResults {
                let threshold =
                    wantedResults == 0
                    ? .infinity : SearchEngine.kthLargest(resolved.lazy.map(\.score), k: wantedResults)
                resolved.removeAll { $0.score < threshold }
            }
        } else {
            total = hits.count
            // Every hit scoring at least the `wanted`-th best score: ties at the cut are kept so
            // the order among equal scores does not depend on doc ids (it is decided by item key).
            let wanted = query.offset + query.limit
            if wanted == 0 {
                hits = []
            } else if hits.count > wanted {
                let threshold = SearchEngine.kthLargest(hits.lazy.map(\.score), k: wanted)
                hits.removeAll { $0.score < threshold }
            }
            for hit in hits {
                guard let key = try index.itemKey(of: hit.docID) else { continue }
                resolved.append((key, hit.score))
            }
        }
        resolved.sort { $0.score != $1.score ? $0.score > $1.score : $0.key.lexicographicallyPrecedes($1.key) }
        let highlighter = query.highlights.map {
            Highlighter(tokenizer: tokenizer, terms: tokenizer.queryTerms(in: query.text), options: $0)
        }
        let results = try resolved.dropFirst(query.offset).prefix(query.limit).compactMap { entry -> SearchResult? in
            let (collection, id) = try entry.key.withUnsafeBytes { try Keys.splitItem($0) }
            guard let item = try reader.item(collection, id) else { return nil }
            var result = SearchResult(item: item, score: entry.score)
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

    private func candidates(_ query: SearchQuery, in collection: String, index: inout IndexReader) throws
        -> [(docID: UInt32, score: Double)]
    {
        let stats = try CollectionStats.load(collection, tx: reader.tx, db: databases.state)
        guard stats.documents > 0 else { return [] }
        let terms = tokenizer.queryTerms(in: query.text)
        let tags = Set(query.tags.map(tokenizer.normalizeTag).filter { !$0.isEmpty })
        guard !terms.isEmpty || !tags.isEmpty else { return [] }

        var groups: [Group] = []
        for term in terms {
            let key = IndexKeys.term(collection: collection, term: term.text)
            let keys =
                term.isPrefix
                ? try index.expand(prefix: key, limit: SearchEngine.maxExpansions) : [try index.lists(of: key)]
            let estimate = try keys.reduce(0) { $0 + (try $1.estimatedFrequency()) }
            guard estimate > 0 else { return [] }
            groups.append(Group(terms: keys, estimate: estimate, scored: true, position: groups.count))
        }
        for tag in tags.sorted(by: utf8Less) {
            let key = try index.lists(of: IndexKeys.tag(collection: collection, tag: tag))
            let estimate = try key.estimatedFrequency()
            guard estimate > 0 else { return [] }
            groups.append(Group(terms: [key], estimate: estimate, scored: false, position: groups.count))
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

        // The driver: the live documents of the group with the fewest postings, in doc-id order.
        // `contributions[g][c]`: what query group `g` adds to candidate `c`'s score.
        let driver = groups[0]
        var ids: [UInt32] = []
        var contributions = [[Double]](repeating: [], count: groups.count)
        if driver.terms.count == 1 {
            let postings = try index.livePostings(in: driver.terms[0])
            let weight = idf(postings.count)
            ids = postings.map(\.docID)
            contributions[driver.position] =
                driver.scored ? postings.map { score($0, idf: weight) } : [Double](repeating: 0, count: postings.count)
        } else {
            // A prefix: a document may hold several of its terms; it scores its best one.
            var best: [UInt32: Double] = [:]
            for term in driver.terms {
                let postings = try index.livePostings(in: term)
                let weight = idf(postings.count)
                for posting in postings {
                    let value = driver.scored ? score(posting, idf: weight) : 0
                    best[posting.docID] = max(best[posting.docID] ?? 0, value)
                }
            }
            ids = best.keys.sorted()
            contributions[driver.position] = ids.map { best[$0]! }
        }
        // Every other group must match too: walk its postings alongside the candidates.
        for group in groups.dropFirst() where !ids.isEmpty {
            var best = [Double](repeating: -1, count: ids.count)
            for term in group.terms {
                var matches: [(candidate: Int, posting: Posting)] = []
                var position = 0
                let frequency = try index.forEachLivePosting(in: term) { posting in
                    while position < ids.count && ids[position] < posting.docID { position += 1 }
                    if position < ids.count && ids[position] == posting.docID { matches.append((position, posting)) }
                }
                let weight = idf(frequency)
                for match in matches {
                    best[match.candidate] = max(
                        best[match.candidate], group.scored ? score(match.posting, idf: weight) : 0)
                }
            }
            let kept = ids.indices.filter { best[$0] >= 0 }
            ids = kept.map { ids[$0] }
            for other in contributions.indices where !contributions[other].isEmpty {
                contributions[other] = kept.map { contributions[other][$0] }
            }
            contributions[group.position] = kept.map { best[$0] }
        }
        let scores = ids.indices.map { candidate in
            contributions.reduce(0.0) { $0 + ($1.isEmpty ? 0 : $1[candidate]) }
        }
        return zip(ids, scores).map { ($0, $1) }
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
