/// Where a search result's field matched: a snippet of the field's text around the best
/// match (or the whole text), and the matched ranges in it.
///
/// ```swift
/// var query = SearchQuery("sync desi", collection: "notes")
/// query.highlights = HighlightOptions()
/// for result in try store.search(query) {
///     print(result.highlights["content"]?.marked ?? "")   // "…the <b>sync</b> <b>design</b> for…"
/// }
/// ```
///
/// Ranges are in ``text`` as it is in the item — a match folded by the tokenizer (`Café` for
/// `cafe`), a prefix (`design` for `desi`) or a Korean word with its particle (`동기화를` for
/// `동기화`, whose matched part is `동기화`) is marked where it stands.
public struct Highlight: Sendable, Hashable {
    /// The snippet: the part of the field's text around the best match (all of it when it is
    /// short enough), as the item holds it.
    public var text: String
    /// The matched parts of ``text``, in order, as UTF-8 byte offsets (see ``matches``).
    public var ranges: [Range<Int>]
    /// Whether the field's text goes on before ``text``.
    public var cutBefore: Bool
    /// Whether the field's text goes on after ``text``.
    public var cutAfter: Bool
    /// ``text`` with each matched part between the options' markers, and the ellipsis where
    /// the text was cut: ready to show.
    public var marked: String

    /// The matched parts of ``text`` as string indices, for styling an `AttributedString`.
    public var matches: [Range<String.Index>] {
        let utf8 = text.utf8
        return ranges.map { range in
            utf8.index(
                utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: range.upperBound)
        }
    }
}

/// How search results carry snippets and highlights (``SearchQuery/highlights``).
public struct HighlightOptions: Sendable, Hashable {
    /// The most words a snippet shows around the best match (0: the whole field).
    public var snippetWords: Int = 16
    /// The fields to highlight (`nil`: the collection's searchable fields).
    public var fields: [String]?
    /// What ``Highlight/marked`` puts before each matched part.
    public var open: String = "<b>"
    /// What ``Highlight/marked`` puts after each matched part.
    public var close: String = "</b>"
    /// What ``Highlight/marked`` puts where the text was cut.
    public var ellipsis: String = "…"

    /// Creates options: 16-word snippets, `<b>`…`</b>` markers, `…` where cut.
    public init(
        snippetWords: Int = 16, fields: [String]? = nil, open: String = "<b>", close: String = "</b>",
        ellipsis: String = "…"
    ) {
        self.snippetWords = snippetWords
        self.fields = fields
        self.open = open
        self.close = close
        self.ellipsis = ellipsis
    }
}
