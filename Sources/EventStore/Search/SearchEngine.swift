import Foundation
import LMDB

/// Answers queries from the inverted index: AND of the query terms, BM25 with field weights
/// (folded into the weighted term frequencies and lengths at index time), prefix expansion of
/// the last term, tag filters.
///
/// The rarest term drives: its postings are scanned page by page, and each candidate is checked
/// against the other terms with one B-tree seek per term.
struct SearchEngine {
    let reader: StoreReader
    let databases: ProjectionDatabases
    let tokenizer = Tokenizer()

    static let k1 = 1.2
    static let b = 0.75
    /// The most index terms one prefix expands to.
    static let maxExpansions = 64

    /// One query term and the index terms it matches.
    private struct Group {
        var keys: [[UInt8]]
        var frequencies: [Int]
        var scored: Bool
        var documentFrequency: Int { frequencies.reduce(0, +) }
    }

    private struct Candidate {
        var docID: UInt32
        var score: Double
    }

    func search(_ query: SearchQuery) throws -> [SearchResult] {
        guard query.limit > 0, query.offset >= 0 else { return [] }
        let collections = try query.collection.map { [$0] } ?? allCollections()
        var hits: [(collection: String, candidate: Candidate)] = []
        for collection in collections {
            for candidate in try candidates(query, in: collection) { hits.append((collection, candidate)) }
        }
        // Every hit scoring at least the `wanted`-th best score: ties at the cut are kept so the
        // order among equal scores does not depend on doc ids (it is decided by item key below).
        let wanted = query.offset + query.limit
        if hits.count > wanted {
            let threshold = SearchEngine.kthLargest(hits.lazy.map(\.candidate.score), k: wanted)
            hits.removeAll { $0.candidate.score < threshold }
        }
        var resolved: [(key: [UInt8], score: Double)] = []
        for hit in hits {
            guard let key = try reader.tx.value(forKey: StoredDocument.docIDKey(hit.candidate.docID), in: databases.searchDocIDs)
            else { continue }
            resolved.append((key, hit.candidate.score))
        }
        resolved.sort { $0.score != $1.score ? $0.score > $1.score : $0.key.lexicographicallyPrecedes($1.key) }
        return try resolved.dropFirst(query.offset).prefix(query.limit).compactMap { entry in
            let (collection, id) = try entry.key.withUnsafeBytes { try Keys.splitItem($0) }
            return try reader.item(collection, id).map { SearchResult(item: $0, score: entry.score) }
        }
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
        var names: [String] = []
        try reader.tx.forEach(in: databases.searchStats) { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return names
    }

    private func candidates(_ query: SearchQuery, in collection: String) throws -> [Candidate] {
        let stats = try CollectionStats.load(collection, tx: reader.tx, db: databases.searchStats)
        guard stats.documents > 0 else { return [] }
        let terms = tokenizer.queryTerms(in: query.text)
        let tags = Set(query.tags.map(tokenizer.normalizeTag).filter { !$0.isEmpty })
        guard !terms.isEmpty || !tags.isEmpty else { return [] }

        return try reader.tx.withCursor(on: databases.searchPostings) { cursor -> [Candidate] in
            var groups: [Group] = []
            for term in terms {
                let group = try self.group(for: term, collection: collection, cursor: cursor)
                if group.keys.isEmpty { return [] }
                groups.append(group)
            }
            for tag in tags.sorted(by: utf8Less) {
                let key = SearchIndexWriter.tagKey(collection: collection, tag: tag)
                guard let frequency = try frequency(of: key, cursor: cursor) else { return [] }
                groups.append(Group(keys: [key], frequencies: [frequency], scored: false))
            }
            let order = groups.indices.sorted { groups[$0].documentFrequency < groups[$1].documentFrequency }
            let documents = Double(stats.documents)
            let average = stats.averageLength

            func idf(_ frequency: Int) -> Double {
                log(1 + (documents - Double(frequency) + 0.5) / (Double(frequency) + 0.5))
            }
            func score(_ posting: UnsafeRawBufferPointer, idf: Double) -> Double {
                let weighted = Double(UInt16(posting[4]) << 8 | UInt16(posting[5]))
                let length = Double(UInt16(posting[6]) << 8 | UInt16(posting[7]))
                let norm = SearchEngine.k1 * (1 - SearchEngine.b + SearchEngine.b * length / average)
                return idf * weighted * (SearchEngine.k1 + 1) / (weighted + norm)
            }

            // The driver: every posting of the rarest group.
            let driver = groups[order[0]]
            var candidates: [Candidate] = []
            if driver.keys.count == 1 {
                // One index term: its postings are distinct documents already.
                candidates.reserveCapacity(driver.frequencies[0])
                let weight = idf(driver.frequencies[0])
                try forEachPosting(key: driver.keys[0], cursor: cursor) { posting in
                    candidates.append(Candidate(docID: docIDOf(posting), score: driver.scored ? score(posting, idf: weight) : 0))
                }
            } else {
                // A prefix: a document may hold several of its terms; it scores its best one.
                var scores: [UInt32: Double] = [:]
                for (key, frequency) in zip(driver.keys, driver.frequencies) {
                    let weight = idf(frequency)
                    try forEachPosting(key: key, cursor: cursor) { posting in
                        let docID = docIDOf(posting)
                        let value = driver.scored ? score(posting, idf: weight) : 0
                        scores[docID] = max(scores[docID] ?? 0, value)
                    }
                }
                candidates = scores.map { Candidate(docID: $0.key, score: $0.value) }
            }
            // Every other group must match too.
            for index in order.dropFirst() {
                let group = groups[index]
                let weights = group.frequencies.map(idf)
                var kept: [Candidate] = []
                kept.reserveCapacity(candidates.count)
                for var candidate in candidates {
                    var best: Double?
                    // The least posting of the document: its id, then zeros (big-endian).
                    let probe = (UInt64(candidate.docID) << 32).bigEndian
                    for (key, weight) in zip(group.keys, weights) {
                        let found = try key.withUnsafeBytes { key in
                            try withUnsafeBytes(of: probe) { probe in try cursor.seek(key: key, valueAtLeast: probe) }
                        }
                        guard let entry = found, entry.value.count == 8, docIDOf(entry.value) == candidate.docID else { continue }
                        let value = group.scored ? score(entry.value, idf: weight) : 0
                        best = max(best ?? 0, value)
                    }
                    guard let best else { continue }
                    candidate.score += best
                    kept.append(candidate)
                }
                candidates = kept
                if candidates.isEmpty { break }
            }
            return candidates
        }
    }

    private func group(for term: QueryTerm, collection: String, cursor: Cursor) throws -> Group {
        let key = SearchIndexWriter.postingKey(collection: collection, term: term.text)
        guard term.isPrefix else {
            guard let frequency = try frequency(of: key, cursor: cursor) else { return Group(keys: [], frequencies: [], scored: true) }
            return Group(keys: [key], frequencies: [frequency], scored: true)
        }
        var keys: [[UInt8]] = []
        var frequencies: [Int] = []
        var entry = try cursor.seek(atLeast: key)
        while let current = entry, current.key.starts(with: key), keys.count < SearchEngine.maxExpansions {
            keys.append(Array(current.key))
            frequencies.append(try cursor.duplicateCount())
            entry = try cursor.nextKey()
        }
        return Group(keys: keys, frequencies: frequencies, scored: true)
    }

    private func frequency(of key: [UInt8], cursor: Cursor) throws -> Int? {
        let found = try key.withUnsafeBytes { try cursor.seek(exactly: $0) }
        return try found.map { _ in try cursor.duplicateCount() }
    }

    private func forEachPosting(key: [UInt8], cursor: Cursor, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let first = try key.withUnsafeBytes({ try cursor.seek(exactly: $0) }) else { return }
        // A key with one value has no duplicate page to read in bulk.
        if try cursor.duplicateCount() == 1 {
            if first.value.count == 8 { try body(first.value) }
            return
        }
        var page = try cursor.currentMultiple()
        while let current = page {
            var offset = 0
            while offset + 8 <= current.value.count {
                try body(UnsafeRawBufferPointer(rebasing: current.value[offset..<offset + 8]))
                offset += 8
            }
            page = try cursor.nextMultiple()
        }
    }
}

@inline(__always)
private func docIDOf(_ posting: UnsafeRawBufferPointer) -> UInt32 {
    UInt32(posting[0]) << 24 | UInt32(posting[1]) << 16 | UInt32(posting[2]) << 8 | UInt32(posting[3])
}

extension StoreReader {
    /// Searches the offline full-text index.
    ///
    /// - Returns: Items best first, with their scores. Deleted items never appear.
    public func search(_ query: SearchQuery) throws -> [SearchResult] {
        try SearchEngine(reader: self, databases: try projection).search(query)
    }
}

extension Store {
    /// Searches the offline full-text index (see ``SearchQuery``).
    public func search(_ query: SearchQuery) throws -> [SearchResult] {
        try read { try $0.search(query) }
    }

    /// Searches one collection, or all, for `text`.
    public func search(_ text: String, in collection: String? = nil, limit: Int = 20) throws -> [SearchResult] {
        try search(SearchQuery(text, collection: collection, limit: limit))
    }
}
