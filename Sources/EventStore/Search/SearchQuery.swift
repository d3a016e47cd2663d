/// A full-text query: words (all must match; the last one also as a prefix; words in double
/// quotes also adjacent and in order, a phrase), optional
/// collection, tag and field filters, paging, and what results carry (highlights) and what the
/// page counts (facets).
///
/// ```swift
/// var query = SearchQuery("sync offl", collection: "notes", tags: ["work"], limit: 10)
/// query.filter = .equal("folder", "inbox")       // only items that match
/// query.facets = ["tags"]                         // "work (12), home (3)" over every hit
/// query.highlights = HighlightOptions()           // snippets with the matches marked
/// let page = try store.searchPage(query)
/// for result in page.results { print(result.score, result.highlights["title"]?.marked ?? "") }
/// ```
public struct SearchQuery: Sendable, Hashable {
    /// The words to find. Normalized like the index (case, diacritics, NFKC; CJK as bigrams);
    /// `"quoted words"` are a phrase (see the Full-text search article).
    public var text: String
    /// The collection to search, or `nil` for every collection.
    public var collection: String?
    /// Tags the items must all carry (see ``SearchConfiguration/tagField``).
    public var tags: [String]
    /// The most results to return.
    public var limit: Int
    /// How many of the best results to skip.
    public var offset: Int
    /// A condition on the items' fields that hits must also meet (see ``Filter``): search
    /// within a folder, within open tasks, within a facet's value. It is checked on every hit.
    public var filter: Filter?
    /// Fields whose values to count over every hit (``SearchPage/facets``): the tag field, or
    /// any other field. An array counts each of its distinct elements.
    public var facets: [String]
    /// The most values a facet lists (the most frequent).
    public var facetLimit: Int
    /// Snippets and highlights for the results returned (`nil`: none); see ``Highlight``.
    public var highlights: HighlightOptions?
    /// Whether words also match index terms a typo away (see ``TypoTolerance``).
    public var typos: TypoTolerance

    /// Creates a query.
    public init(
        _ text: String, collection: String? = nil, tags: [String] = [], limit: Int = 20, offset: Int = 0,
        filter: Filter? = nil, facets: [String] = [], facetLimit: Int = 100, highlights: HighlightOptions? = nil,
        typos: TypoTolerance = .automatic
    ) {
        self.text = text
        self.collection = collection
        self.tags = tags
        self.limit = limit
        self.offset = offset
        self.filter = filter
        self.facets = facets
        self.facetLimit = facetLimit
        self.highlights = highlights
        self.typos = typos
    }
}

/// Whether a search's words also match index terms a typo away: a word of 5 characters or more
/// matches terms one edit away (a letter inserted, removed, replaced, or two adjacent letters
/// swapped), one of 9 or more two edits away; never numbers or CJK text. A result that needed
/// typos ranks below every result that needed fewer (``SearchResult/typos``).
public enum TypoTolerance: String, Sendable, Hashable, CaseIterable {
    /// Only when the words as written find nothing (the default): `synchroniztion` then finds
    /// `synchronization`, and a query that finds something costs nothing more.
    case automatic
    /// Always: results with typos follow those without, on one page.
    case always
    /// Never.
    case off
}

/// One search hit: the item and its BM25 score (greater is better).
public struct SearchResult: Sendable, Hashable {
    /// The matching item.
    public var item: Item
    /// The relevance score.
    public var score: Double
    /// Per field, where the query matched, when the query asked (``SearchQuery/highlights``);
    /// fields without a match are left out.
    public var highlights: [String: Highlight] = [:]
    /// The edits the matched index terms are away from the query's words (0: as written).
    public var typos: Int = 0
}

/// A page of search results, with the number of hits and the facets of all of them.
public struct SearchPage: Sendable, Hashable {
    /// The results of the page, best first.
    public var results: [SearchResult]
    /// How many items match the query, its tags and its filter (every page together).
    public var total: Int
    /// Per facet field (``SearchQuery/facets``), its values over every hit, most frequent first
    /// (then in the order queries sort values: strings by their UTF-8 bytes, numbers by value), at
    /// most ``SearchQuery/facetLimit``. Values equal in query terms (`1` and `1.0`) count as one.
    public var facets: [String: [FacetCount]]
}

/// How many hits of a search hold one value of a facet field.
public struct FacetCount: Sendable, Hashable {
    /// The value.
    public var value: Value
    /// The hits that hold it.
    public var count: Int
}
