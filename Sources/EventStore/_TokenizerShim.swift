package struct QueryTerm: Sendable, Hashable {
    package var text: String
    package var isPrefix: Bool
}
package struct Tokenizer: Sendable {
    package init() {}
    package func forEachIndexTerm(in text: String, _ body: (String) -> Void) {
        for word in text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }) { body(String(word)) }
    }
    package func queryTerms(in query: String) -> [QueryTerm] {
        let words = query.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        return words.enumerated().map { QueryTerm(text: String($1), isPrefix: $0 == words.count - 1) }
    }
    package func normalizeTag(_ tag: String) -> String { tag.lowercased() }
}
