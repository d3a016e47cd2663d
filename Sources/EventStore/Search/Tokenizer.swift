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
    package static let version = 1

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

// MARK: - Scanning

extension Tokenizer {
    /// What produced an emitted term: a non-CJK word, a CJK bigram, or a one-character CJK run.
    private enum TermKind {
        /// A non-CJK word such as `iphone` or `2024`.
        case word
        /// Two adjacent characters of a CJK run, such as `동기` in `동기화`.
        case bigram
        /// A CJK run of exactly one character, such as `용` in `iPhone용`.
        case unigram
    }

    /// Bits 0–63 of the ASCII letter/digit set: the digits `0`–`9` (0x30–0x39).
    private static let alnumLow: UInt64 = 0x03FF_0000_0000_0000
    /// Bits 64–127 of the ASCII letter/digit set: `A`–`Z` (0x41–0x5A) and `a`–`z` (0x61–0x7A).
    private static let alnumHigh: UInt64 = 0x07FF_FFFE_07FF_FFFE

    /// Whether the ASCII byte `byte` (< 0x80) is a letter or digit, e.g. `a`, `Z`, `7`; `'` is not.
    @inline(__always)
    private static func isASCIIAlnum(_ byte: UInt8) -> Bool {
        byte < 64 ? (alnumLow >> UInt64(byte)) & 1 != 0 : (alnumHigh >> UInt64(byte & 63)) & 1 != 0
    }

    /// Whether every byte of `buffer` is ASCII (an OR reduction the optimizer vectorizes).
    @inline(__always)
    private static func isASCII(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var bits: UInt8 = 0
        for byte in buffer { bits |= byte }
        return bits < 0x80
    }

    /// Splits `text` into terms, calling `emit` for each with its kind, and returns whether the text
    /// ends inside a word (no separator after the last word), which makes a query's last word a prefix.
    ///
    /// The UTF-8 bytes are cut into chunks at ASCII separators (ASCII bytes other than letters and
    /// digits). A chunk of ASCII letters and digits is one word, lowercased byte by byte. Chunks with
    /// non-ASCII bytes, together with the separators between consecutive such chunks, form regions
    /// handed to ``scanUnicode(_:_:)``. Cutting at ASCII separators is safe: no normalization step
    /// combines anything across them, and they end words anyway.
    @inline(__always)
    private func scan(_ text: String, _ emit: (UnsafeRawBufferPointer, TermKind) -> Void) -> Bool {
        let original = text
        var text = text
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxTermBytes) { lowered in
        text.withUTF8 { buffer -> Bool in
            let count = buffer.count
            var index = 0
            var endsInWord = false
            var regionStart = -1
            var regionEnd = 0

            /// Hands the pending non-ASCII region to the Unicode path; returns its `endsInWord`.
            func flushRegion() -> Bool {
                let region = regionStart == 0 && regionEnd == count
                    ? original
                    : String(decoding: UnsafeBufferPointer(rebasing: buffer[regionStart..<regionEnd]), as: UTF8.self)
                regionStart = -1
                return scanUnicode(region, emit)
            }

            while index < count {
                let byte = buffer[index]
                if byte < 0x80 && !Self.isASCIIAlnum(byte) {
                    index += 1
                    endsInWord = false
                    continue
                }
                let start = index
                var ascii = true
                while index < count {
                    let byte = buffer[index]
                    if byte >= 0x80 {
                        ascii = false
                    } else if !Self.isASCIIAlnum(byte) {
                        break
                    }
                    index += 1
                }
                if ascii {
                    if regionStart >= 0 { _ = flushRegion() }
                    let length = min(index - start, Self.maxTermBytes)
                    for offset in 0..<length {
                        let byte = buffer[start + offset]
                        lowered[offset] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                    }
                    emit(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(lowered)[0..<length]), .word)
                    endsInWord = true
                } else {
                    if regionStart < 0 { regionStart = start }
                    regionEnd = index
                }
            }
            if regionStart >= 0 {
                let end = regionEnd
                let regionEndsInWord = flushRegion()
                endsInWord = end == count && regionEndsInWord
            }
            return endsInWord
        }
        }
    }

    /// The Unicode path of ``scan(_:_:)``: normalizes `text` (see ``forEachFoldedScalar(of:_:)``),
    /// splits it into words and CJK runs, and emits words, bigrams and unigrams in order.
    ///
    /// Combining marks continue the word they follow (Devanagari vowel signs, for instance) and are
    /// ignored elsewhere; format characters such as the soft hyphen or ZWJ are ignored, except
    /// U+200B ZERO WIDTH SPACE, which separates. `"자동 iPhone용"` → `자동` (bigram), `iphone` (word),
    /// `용` (unigram). Returns whether the text ends inside a word.
    private func scanUnicode(_ text: String, _ emitBytes: (UnsafeRawBufferPointer, TermKind) -> Void) -> Bool {
        func emit(_ term: String, _ kind: TermKind) {
            var term = term
            term.withUTF8 { emitBytes(UnsafeRawBufferPointer($0), kind) }
        }
        var word = String.UnicodeScalarView()
        var previousCJK: Unicode.Scalar?
        var cjkRunLength = 0
        var endsInWord = false

        /// Emits the pending non-CJK word, cut to `maxTermBytes`.
        func flushWord() {
            guard !word.isEmpty else { return }
            emit(Self.cut(String(word)), .word)
            word = String.UnicodeScalarView()
        }
        /// Ends the pending CJK run, emitting its unigram when it has a single character.
        func flushRun() {
            if cjkRunLength == 1, let previousCJK {
                emit(String(Character(previousCJK)), .unigram)
            }
            previousCJK = nil
            cjkRunLength = 0
        }

        Self.forEachFoldedScalar(of: text) { scalar in
            switch Self.classify(scalar) {
            case .letter:
                flushRun()
                word.append(scalar)
                endsInWord = true
            case .cjk:
                flushWord()
                if let previous = previousCJK {
                    var bigram = String.UnicodeScalarView()
                    bigram.append(previous)
                    bigram.append(scalar)
                    emit(String(bigram), .bigram)
                }
                previousCJK = scalar
                cjkRunLength += 1
                endsInWord = true
            case .mark:
                if !word.isEmpty { word.append(scalar) }
            case .ignorable:
                break
            case .separator:
                flushWord()
                flushRun()
                endsInWord = false
            }
        }
        flushWord()
        flushRun()
        return endsInWord
    }

    /// The role of a normalized scalar in word splitting.
    private enum ScalarClass {
        /// A non-CJK letter or digit (`a`, `ж`, `٣`).
        case letter
        /// A CJK letter (Hangul, Han, Hiragana, Katakana), e.g. `한`, `漢`, `か`, `カ`.
        case cjk
        /// A combining mark not removed by folding; continues the current non-CJK word.
        case mark
        /// An invisible format character (soft hyphen, ZWJ, BOM) that neither joins nor separates.
        case ignorable
        /// Whitespace, punctuation, symbols: ends the current word (`'`, `-`, `😀`).
        case separator
    }

    /// Classifies `scalar` for word splitting, e.g. `a` → `.letter`, `한` → `.cjk`, `'` → `.separator`.
    @inline(__always)
    private static func classify(_ scalar: Unicode.Scalar) -> ScalarClass {
        let value = scalar.value
        if value < 0x80 {
            return isASCIIAlnum(UInt8(value)) ? .letter : .separator
        }
        let properties = scalar.properties
        if properties.isAlphabetic || properties.numericType != nil {
            return isCJK(value) ? .cjk : .letter
        }
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return .mark
        case .format:
            return value == 0x200B ? .separator : .ignorable
        default:
            return .separator
        }
    }

    /// Whether `value` is in a CJK script block: Hangul (U+AC00–D7A3, U+1100–11FF, U+3130–318F,
    /// U+A960–A97F, U+D7B0–D7FF), Han (U+4E00–9FFF, U+3400–4DBF, U+F900–FAFF, U+20000–323AF,
    /// and the marks 々〆〇), Hiragana (U+3040–309F) or Katakana (U+30A0–30FF, U+31F0–31FF).
    @inline(__always)
    private static func isCJK(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x11FF, 0x3005...0x3007, 0x3040...0x30FF, 0x3130...0x318F, 0x31F0...0x31FF,
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xD7B0...0xD7FF,
             0xF900...0xFAFF, 0x20000...0x323AF:
            return true
        default:
            return false
        }
    }

    /// `term` cut to at most `limit` UTF-8 bytes at a character (grapheme) boundary, or at a
    /// scalar boundary when the first character alone is longer. `cut("é" × 30)` keeps 24 `é`s.
    private static func cut(_ term: String, to limit: Int = maxTermBytes) -> String {
        guard term.utf8.count > limit else { return term }
        var bytes = 0
        for character in term {
            let size = character.utf8.count
            if bytes + size > limit { break }
            bytes += size
        }
        if bytes == 0 {
            for scalar in term.unicodeScalars {
                let size = UTF8.width(scalar)
                if bytes + size > limit { break }
                bytes += size
            }
        }
        return String(decoding: term.utf8.prefix(bytes), as: UTF8.self)
    }
}
