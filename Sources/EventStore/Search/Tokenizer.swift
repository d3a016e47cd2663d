import Foundation

/// One term of a search query, as produced by ``Tokenizer/queryTerms(in:)``.
///
/// A term either has to match an index term exactly, or, when ``isPrefix`` is set, matches every
/// index term that starts with ``text`` (search-as-you-type: `offl` finds `offline`).
package struct QueryTerm: Sendable, Hashable {
    /// The normalized term, folded exactly like index terms (`Café` → `cafe`).
    package var text: String
    /// Whether to match every index term that starts with ``text`` instead of ``text`` alone.
    package var isPrefix: Bool

    /// Creates a query term, e.g. `QueryTerm(text: "offl", isPrefix: true)`.
    package init(text: String, isPrefix: Bool) {
        self.text = text
        self.isPrefix = isPrefix
    }
}

/// The full-text tokenizer of the offline search index.
///
/// Text is normalized in three steps:
/// 1. NFKC (`ﬁ` → `fi`, full-width `Ａ` → `A`, half-width katakana → katakana);
/// 2. case folding to lowercase (`Straße` → `strasse`: `ß` becomes `ss`);
/// 3. diacritic folding for Latin, Greek and Cyrillic letters (`é` → `e`, `Å` → `a`, `ё` → `е`,
///    `ø` → `o`, `ł` → `l`), done by decomposing only scalars below U+0530 and in U+1E00–U+1FFF and
///    dropping the combining marks. Hangul syllables are never decomposed into jamo.
///
/// Words are maximal runs of letters and digits (Unicode alphabetic or numeric scalars); whitespace,
/// punctuation (including the apostrophe) and symbols separate words, and so does every change
/// between a CJK script (Hangul, Han, Hiragana, Katakana) and anything else: `iPhone용` → `iphone`,
/// `용`. A non-CJK word is one term, cut to ``maxTermBytes`` UTF-8 bytes at a character boundary.
/// A CJK run is indexed as overlapping bigrams (`동기화를` → `동기`, `기화`, `화를`), or as a unigram
/// when it is a single character, so that `동기화` finds `동기화를` when all query terms must match.
///
/// ASCII text takes a fast path that lowercases bytes into a reused buffer and allocates nothing
/// per term (``forEachIndexTermBytes(in:_:)``); only chunks containing non-ASCII bytes take the
/// Unicode path, which calls Foundation's NFKC only for text that needs it (combining marks,
/// compatibility characters outside Latin/Greek/Cyrillic, jamo; see `forEachFoldedScalar`).
package struct Tokenizer: Sendable {
    /// Longer words are cut to this many UTF-8 bytes, at a character boundary
    /// (e.g. a 60-letter ASCII word is indexed as its first 48 letters).
    package static let maxTermBytes = 48

    /// Longer tags are cut to this many UTF-8 bytes, at a character boundary, when indexed and
    /// when queried alike (an index key must stay under LMDB's 511-byte key limit).
    package static let maxTagBytes = 256

    /// The version of the tokenizer's output, recorded with each store's configuration
    /// (``ConfigurationRecord/tokenizerVersion``).
    ///
    /// **Bump it with any change that makes ``indexTerms(in:)``, ``queryTerms(in:)`` or
    /// ``normalizeTag(_:)`` give other terms for some text** (folding tables, word breaks, bigram
    /// rules, ``maxTermBytes``, ``maxTagBytes``): a store indexed by another version is rebuilt when
    /// it is next opened for writing, since its index no longer matches what queries look up.
    ///
    /// Version 2 records term positions (word ordinals and CJK run offsets, see `TermPosition`)
    /// in the index, for phrases and proximity: a store indexed by version 1 is rebuilt.
    package static let version = 2

    /// Creates a tokenizer; it has no state, so one can be shared freely.
    package init() {}

    /// The index terms of `text`, in order of appearance; duplicates are kept because callers
    /// count them.
    ///
    /// `indexTerms(in: "Sync'ing the café, 동기화를!")` →
    /// `["sync", "ing", "the", "cafe", "동기", "기화", "화를"]`.
    package func indexTerms(in text: String) -> [String] {
        var terms: [String] = []
        forEachIndexTerm(in: text) { terms.append($0) }
        return terms
    }

    /// Calls `body` for each index term of `text`, in the same sequence as ``indexTerms(in:)``,
    /// without building an array: `forEachIndexTerm(in: "Hello, World") { count[$0, default: 0] += 1 }`
    /// sees `hello` and then `world`.
    package func forEachIndexTerm(in text: String, _ body: (String) -> Void) {
        _ = scan(text) { term, _ in body(String(decoding: term, as: UTF8.self)) }
    }

    /// Calls `body` with the UTF-8 bytes of each index term of `text`, in the same sequence as
    /// ``indexTerms(in:)``; the bytes are valid only during the call. ASCII words are lowercased
    /// into a reused buffer, so indexing allocates nothing per term.
    package func forEachIndexTermBytes(in text: String, _ body: (UnsafeRawBufferPointer) -> Void) {
        _ = scan(text) { term, _ in body(term) }
    }

    /// The terms of a search query, normalized and split exactly like index terms.
    ///
    /// - The last word gets `isPrefix == true` when it is a non-CJK word that runs to the end of the
    ///   query (search-as-you-type): `"sync offl"` → `sync`, `offl*`, but `"sync offl "` → `sync`,
    ///   `offl`.
    /// - A CJK run of two or more characters gives its bigrams with `isPrefix == false`; a run of one
    ///   character (anywhere in the query) gives that unigram with `isPrefix == true`, so that `책`
    ///   finds the indexed bigram `책을`.
    /// - Duplicate terms are removed, keeping the first: `"sync sync"` → `sync` (exact). Since all
    ///   terms must match, an exact term makes a later prefix term with the same text redundant.
    package func queryTerms(in query: String) -> [QueryTerm] {
        var terms: [QueryTerm] = []
        var seen = Set<String>()
        var lastKind: TermKind?
        var lastWasAdded = false
        let endsInWord = scan(query) { bytes, kind in
            let text = String(decoding: bytes, as: UTF8.self)
            lastKind = kind
            lastWasAdded = seen.insert(text).inserted
            if lastWasAdded {
                terms.append(QueryTerm(text: text, isPrefix: kind == .unigram))
            }
        }
        if endsInWord, lastKind == .word, lastWasAdded {
            terms[terms.count - 1].isPrefix = true
        }
        return terms
    }

    /// A tag normalized for exact tag filtering: folded like terms (NFKC, lowercase, diacritics),
    /// whitespace trimmed and inner whitespace runs collapsed to one space; punctuation is kept.
    /// Returns the empty string when nothing is left. Tags longer than ``maxTagBytes`` are cut.
    ///
    /// `normalizeTag("  Café   Crème\t") == "cafe creme"`, `normalizeTag("C++") == "c++"`.
    package func normalizeTag(_ tag: String) -> String {
        Self.cut(foldTag(tag), to: Self.maxTagBytes)
    }

    private func foldTag(_ tag: String) -> String {
        var copy = tag
        let ascii = copy.withUTF8 { Self.isASCII($0) }
        if ascii {
            return copy.withUTF8 { buffer in
                String(unsafeUninitializedCapacity: buffer.count) { out in
                    var count = 0
                    var pendingSpace = false
                    for byte in buffer {
                        if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                            pendingSpace = count > 0
                            continue
                        }
                        if pendingSpace {
                            out[count] = 0x20
                            count += 1
                            pendingSpace = false
                        }
                        out[count] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                        count += 1
                    }
                    return count
                }
            }
        }
        var result = String.UnicodeScalarView()
        var pendingSpace = false
        Self.forEachFoldedScalar(of: tag) { scalar in
            if scalar.properties.isWhitespace {
                pendingSpace = !result.isEmpty
                return
            }
            if pendingSpace {
                result.append(" ")
                pendingSpace = false
            }
            result.append(scalar)
        }
        return String(result)
    }
}
