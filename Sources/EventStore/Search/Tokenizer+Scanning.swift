/// Scanning: cutting text into words, CJK bigrams and unigrams, with an ASCII fast path.
extension Tokenizer {
    /// What produced an emitted term: a non-CJK word, a CJK bigram, or a one-character CJK run.
    enum TermKind {
        /// A non-CJK word such as `iphone` or `2024`.
        case word
        /// The first two characters of a CJK run, such as `동기` in `동기화`.
        case firstBigram
        /// Two adjacent characters of a CJK run after its first, such as `기화` in `동기화`.
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
    static func isASCIIAlnum(_ byte: UInt8) -> Bool {
        byte < 64 ? (alnumLow >> UInt64(byte)) & 1 != 0 : (alnumHigh >> UInt64(byte & 63)) & 1 != 0
    }

    /// Whether every byte of `buffer` is ASCII (an OR reduction the optimizer vectorizes).
    @inline(__always)
    static func isASCII(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var bits: UInt8 = 0
        for byte in buffer { bits |= byte }
        return bits < 0x80
    }

    /// Splits `text` into terms, calling `emit` for each with its kind, and returns whether the text
    /// ends inside a word (no separator after the last word), which makes a query's last word a prefix.
    ///
    /// The UTF-8 bytes are cut into chunks at ASCII separators (ASCII bytes other than letters and
    /// digits). A chunk of ASCII letters and digits is one word, lowercased byte by byte; a chunk of
    /// Hangul, Han or kana that folding keeps (``isSimpleCJKRun(_:)``) is cut into bigrams straight
    /// from its bytes. Other chunks with non-ASCII bytes, together with the separators between
    /// consecutive such chunks, form regions handed to ``scanUnicode(_:_:)``. Cutting at ASCII
    /// separators is safe: no normalization step combines anything across them, and they end words
    /// anyway.
    @inline(__always)
    func scan(_ text: String, _ emit: (UnsafeRawBufferPointer, TermKind) -> Void) -> Bool {
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
                    let region =
                        regionStart == 0 && regionEnd == count
                        ? original
                        : String(
                            decoding: UnsafeBufferPointer(rebasing: buffer[regionStart..<regionEnd]), as: UTF8.self)
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
                    } else if Self.isSimpleCJKRun(UnsafeBufferPointer(rebasing: buffer[start..<index])) {
                        if regionStart >= 0 { _ = flushRegion() }
                        Self.emitCJKRun(
                            UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[start..<index]), emit)
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

    /// Whether `chunk` is a run of CJK characters that folding keeps as they are and that nothing
    /// composes with: Hangul syllables, Han ideographs (U+4E00–9FFF, U+3400–4DBF) and kana without
    /// voicing marks (``isSimpleCJK(_:)``), three UTF-8 bytes each. Such a run is cut into
    /// bigrams straight from its bytes (``emitCJKRun(_:_:)``), as the Unicode path would cut it.
    @inline(__always)
    static func isSimpleCJKRun(_ chunk: UnsafeBufferPointer<UInt8>) -> Bool {
        guard chunk.count % 3 == 0 else { return false }
        var offset = 0
        while offset < chunk.count {
            let lead = chunk[offset]
            guard lead & 0xF0 == 0xE0 else { return false }
            let value =
                UInt32(lead & 0x0F) << 12 | UInt32(chunk[offset + 1] & 0x3F) << 6 | UInt32(chunk[offset + 2] & 0x3F)
            guard isSimpleCJK(value) else { return false }
            offset += 3
        }
        return true
    }

    /// Whether `value` is a CJK letter that NFKC, lowercasing and diacritic folding keep and
    /// that composes with nothing next to it: Hangul syllables (U+AC00–D7A3; conjoining jamo
    /// are excluded), Han ideographs (U+3400–4DBF, U+4E00–9FFF) and kana (U+3041–3096,
    /// U+30A1–30FA, U+30FC–30FE; the voicing marks U+3099–309C are excluded).
    @inline(__always)
    static func isSimpleCJK(_ value: UInt32) -> Bool {
        switch value {
        case 0xAC00...0xD7A3, 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x3041...0x3096, 0x30A1...0x30FA, 0x30FC...0x30FE:
            return true
        default:
            return false
        }
    }

    /// Emits the terms of a run of ``isSimpleCJK(_:)`` characters (three bytes each) as the
    /// Unicode path does: its overlapping bigrams (the first as ``TermKind/firstBigram``), or its
    /// one character as a ``TermKind/unigram``. `동기화` → `동기`, `기화`.
    @inline(__always)
    static func emitCJKRun(_ run: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer, TermKind) -> Void) {
        let characters = run.count / 3
        guard characters > 1 else {
            emit(run, .unigram)
            return
        }
        for character in 0..<characters - 1 {
            emit(
                UnsafeRawBufferPointer(rebasing: run[character * 3..<character * 3 + 6]),
                character == 0 ? .firstBigram : .bigram)
        }
    }

    /// The Unicode path of ``scan(_:_:)``: normalizes `text` (see ``forEachFoldedScalar(of:_:)``),
    /// splits it into words and CJK runs, and emits words, bigrams and unigrams in order.
    ///
    /// Combining marks continue the word they follow (Devanagari vowel signs, for instance) and are
    /// ignored elsewhere; format characters such as the soft hyphen or ZWJ are ignored, except
    /// U+200B ZERO WIDTH SPACE, which separates. `"자동 iPhone용"` → `자동` (bigram), `iphone` (word),
    /// `용` (unigram). Returns whether the text ends inside a word.
    func scanUnicode(_ text: String, _ emitBytes: (UnsafeRawBufferPointer, TermKind) -> Void) -> Bool {
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
                    emit(String(bigram), cjkRunLength == 1 ? .firstBigram : .bigram)
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
    enum ScalarClass {
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
    static func classify(_ scalar: Unicode.Scalar) -> ScalarClass {
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
    static func cut(_ term: String, to limit: Int = maxTermBytes) -> String {
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
