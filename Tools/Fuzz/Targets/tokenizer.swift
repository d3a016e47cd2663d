// libFuzzer target: the search tokenizer (index terms, query terms, tags) on arbitrary text.
// Built by Tools/Fuzz/run.sh.
@testable import EventStore

/// libFuzzer's entry point: checks one input, traps on a broken invariant, returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokenizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let tokenizer = Tokenizer()
    for term in tokenizer.indexTerms(in: text) {
        precondition(!term.isEmpty, "empty index term")
        precondition(term.utf8.count <= Tokenizer.maxTermBytes, "index term longer than the limit")
    }
    for term in tokenizer.queryTerms(in: text) {
        precondition(!term.text.isEmpty, "empty query term")
        precondition(term.text.utf8.count <= Tokenizer.maxTermBytes, "query term longer than the limit")
    }
    _ = tokenizer.normalizeTag(text)
    // Tokenizing is deterministic.
    precondition(tokenizer.indexTerms(in: text) == tokenizer.indexTerms(in: text))
    return 0
}
