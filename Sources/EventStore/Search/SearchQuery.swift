/// A full-text query: words (all must match; the last one also as a prefix), optional
/// collection and tag filters, and paging.
///
/// ```swift
/// let results = try store.search(SearchQuery("sync offl", collection: "notes", tags: ["work"], limit: 10))
/// for result in results { print(result.score, result.item["title"] ?? nil) }
/// ```
public struct SearchQuery: Sendable, Hashable {
    /// The words to find. Normalized like the index (case, diacritics, NFKC; CJK as bigrams).
    public var text: String
    /// The collection to search, or `nil` for every collection.
    public var collection: String?
    /// Tags the items must all carry (see ``SearchConfiguration/tagField``).
    public var tags: [String]
    /// The most results to return.
    public var limit: Int
    /// How many of the best results to skip.
    public var offset: Int

    /// Creates a query.
    public init(_ text: String, collection: String? = nil, tags: [String] = [], limit: Int = 20, offset: Int = 0) {
        self.text = text
        self.collection = collection
        self.tags = tags
        self.limit = limit
        self.offset = offset
    }
}

/// One search hit: the item and its BM25 score (greater is better).
public struct SearchResult: Sendable, Hashable {
    /// The matching item.
    public var item: Item
    /// The relevance score.
    public var score: Double
}
