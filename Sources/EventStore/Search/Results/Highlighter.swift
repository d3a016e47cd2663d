/// Finds where a query's terms match in a field's text, as the text stands, and cuts a snippet
/// around the best match (see ``Highlight``).
///
/// The text is cut into words and CJK runs the way the tokenizer cuts it, but on the original
/// scalars, keeping each one's UTF-8 range; each word is folded by the tokenizer and compared
/// with the query terms (a prefix term matches the words it starts), and a CJK run is compared
/// bigram by bigram, so that the characters a query's bigrams cover are marked (`동기화` in
/// `동기화를`). Runs only for the results a page returns.
struct Highlighter {
    let tokenizer: Tokenizer
    let terms: [QueryTerm]
    let options: HighlightOptions

    /// A word or CJK run of the text: its UTF-8 range, the parts that matched (a span of the
    /// matches list), and which query terms matched it (bit `i` for term `i`; terms past the
    /// 64th only mark, they do not steer the snippet). No allocation per word.
    private struct Piece {
        var range: Range<Int>
        var firstMatch = 0
        var matchCount = 0
        var terms: UInt64 = 0

        var isMatch: Bool { matchCount > 0 }
    }

    /// The highlight of `text`, or `nil` when no query term matches it.
    func highlight(_ text: String) -> Highlight? {
        guard !terms.isEmpty else { return nil }
        let bytes = Array(text.utf8)
        let (pieces, matches) = self.pieces(of: text, bytes: bytes)
        guard !matches.isEmpty else { return nil }
        let (start, end) = window(pieces)
        let from = start == 0 ? 0 : pieces[start].range.lowerBound
        let to = end == pieces.count ? bytes.count : pieces[end - 1].range.upperBound
        var ranges: [Range<Int>] = []
        for piece in pieces[start..<end] where piece.isMatch {
            for range in matches[piece.firstMatch..<piece.firstMatch + piece.matchCount] {
                ranges.append((range.lowerBound - from)..<(range.upperBound - from))
            }
        }
        let snippet = Array(bytes[from..<to])
        func string(_ range: Range<Int>) -> String { String(decoding: snippet[range], as: UTF8.self) }
        var marked = start > 0 ? options.ellipsis : ""
        var position = 0
        for range in ranges {
            marked += string(position..<range.lowerBound) + options.open + string(range) + options.close
            position = range.upperBound
        }
        marked += string(position..<snippet.count) + (end < pieces.count ? options.ellipsis : "")
        return Highlight(
            text: String(decoding: snippet, as: UTF8.self), ranges: ranges, cutBefore: start > 0,
            cutAfter: end < pieces.count, marked: marked)
    }

    /// The pieces `[start, end)` the snippet shows: every piece when they fit, else the window
    /// of ``HighlightOptions/snippetWords`` pieces that matches the most distinct query terms
    /// (then the most pieces; the earliest), moved to begin a quarter of a window before its
    /// first match when its matches leave room.
    private func window(_ pieces: [Piece]) -> (Int, Int) {
        let size = options.snippetWords
        guard size > 0, pieces.count > size else { return (0, pieces.count) }
        var best = (distinct: -1, matched: -1, start: 0)
        var counts = [Int](repeating: 0, count: 64)
        var distinct = 0
        var matched = 0
        func forEachTerm(_ bits: UInt64, _ body: (Int) -> Void) {
            var bits = bits
            while bits != 0 {
                body(bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
        for index in pieces.indices {
            forEachTerm(pieces[index].terms) { term in
                if counts[term] == 0 { distinct += 1 }
                counts[term] += 1
            }
            if pieces[index].isMatch { matched += 1 }
            let start = index - size + 1
            if start > 0 {
                let leaving = pieces[start - 1]
                forEachTerm(leaving.terms) { term in
                    counts[term] -= 1
                    if counts[term] == 0 { distinct -= 1 }
                }
                if leaving.isMatch { matched -= 1 }
            }
            if start >= 0, (distinct, matched) > (best.distinct, best.matched) {
                best = (distinct, matched, start)
            }
        }
        // Begun a quarter of a window before the window's first match (as far as its last match
        // leaves room), within the text.
        let matches = (best.start..<best.start + size).filter { pieces[$0].isMatch }
        let first = matches.first ?? best.start
        let slack = size - ((matches.last ?? first) - first + 1)
        let start = max(0, min(first - min(size / 4, slack), pieces.count - size))
        return (start, start + size)
    }

    /// Cuts `text` into words and CJK runs and marks what the query terms match.
    private func pieces(of text: String, bytes: [UInt8]) -> (pieces: [Piece], matches: [Range<Int>]) {
        var pieces: [Piece] = []
        var matches: [Range<Int>] = []
        var word: Range<Int>?
        var run: [Range<Int>] = []
        func bit(_ index: Int) -> UInt64 { index < 64 ? 1 << UInt64(index) : 0 }
        func substring(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        let termBytes = terms.map { Array($0.text.utf8) }
        func endWord() {
            guard let range = word else { return }
            word = nil
            var piece = Piece(range: range)
            if bytes[range].allSatisfy({ $0 < 0x80 }) {
                // ASCII: the index term is the word lowercased (and cut), compared in place.
                let length = min(range.count, Tokenizer.maxTermBytes)
                for (index, term) in termBytes.enumerated()
                where terms[index].isPrefix ? term.count <= length : term.count == length {
                    var equal = true
                    for offset in 0..<term.count {
                        let byte = bytes[range.lowerBound + offset]
                        if (byte &- 0x41 < 26 ? byte | 0x20 : byte) != term[offset] {
                            equal = false
                            break
                        }
                    }
                    if equal {
                        piece.terms |= bit(index)
                        piece.matchCount = 1
                    }
                }
            } else {
                let folded = tokenizer.indexTerms(in: substring(range))
                for (index, term) in terms.enumerated()
                where folded.contains(where: { $0 == term.text || (term.isPrefix && $0.hasPrefix(term.text)) }) {
                    piece.terms |= bit(index)
                    piece.matchCount = 1
                }
            }
            if piece.isMatch {
                piece.firstMatch = matches.count
                matches.append(range)
            }
            pieces.append(piece)
        }
        func endRun() {
            guard let first = run.first, let last = run.last else { return }
            var piece = Piece(range: first.lowerBound..<last.upperBound)
            var marked = [Bool](repeating: false, count: run.count)
            if run.count == 1 {
                let unigram = tokenizer.indexTerms(in: substring(first))
                for (index, term) in terms.enumerated() where unigram.contains(term.text) {
                    piece.terms |= bit(index)
                    marked[0] = true
                }
            } else {
                for position in 0..<(run.count - 1) {
                    let span = run[position].lowerBound..<run[position + 1].upperBound
                    // Hangul syllables and unified Han ideographs fold to themselves: their
                    // bigram is their bytes, compared without the tokenizer.
                    if Highlighter.foldsToItself(bytes, run[position])
                        && Highlighter.foldsToItself(bytes, run[position + 1])
                    {
                        for (index, term) in termBytes.enumerated() {
                            if term.count == span.count, bytes[span].elementsEqual(term) {
                                marked[position] = true
                                marked[position + 1] = true
                            } else if terms[index].isPrefix, term.count < span.count,
                                bytes[span.lowerBound..<span.lowerBound + term.count].elementsEqual(term)
                            {
                                marked[position] = true
                            } else {
                                continue
                            }
                            piece.terms |= bit(index)
                        }
                        continue
                    }
                    let bigram = tokenizer.indexTerms(in: substring(span))
                    for (index, term) in terms.enumerated() {
                        if bigram.contains(term.text) {
                            marked[position] = true
                            marked[position + 1] = true
                        } else if term.isPrefix, bigram.contains(where: { $0.hasPrefix(term.text) }) {
                            marked[position] = true
                        } else {
                            continue
                        }
                        piece.terms |= bit(index)
                    }
                }
            }
            // Adjacent marked characters make one range.
            piece.firstMatch = matches.count
            var position = 0
            while position < run.count {
                guard marked[position] else {
                    position += 1
                    continue
                }
                var end = position
                while end + 1 < run.count && marked[end + 1] { end += 1 }
                matches.append(run[position].lowerBound..<run[end].upperBound)
                piece.matchCount += 1
                position = end + 1
            }
            run = []
            pieces.append(piece)
        }

        pieces.reserveCapacity(bytes.count / 5)
        var offset = 0
        while offset < bytes.count {
            let lead = bytes[offset]
            if lead < 0x80 {
                // ASCII: a letter or digit continues a word, anything else separates.
                if Tokenizer.isASCIIAlnum(lead) {
                    endRun()
                    word = (word?.lowerBound ?? offset)..<offset + 1
                } else {
                    endWord()
                    endRun()
                }
                offset += 1
                continue
            }
            let (scalar, width) = Highlighter.scalar(in: bytes, at: offset)
            let range = offset..<offset + width
            offset += width
            switch Tokenizer.classify(scalar) {
            case .letter:
                endRun()
                word = (word?.lowerBound ?? range.lowerBound)..<range.upperBound
            case .cjk:
                endWord()
                run.append(range)
            case .mark, .ignorable:
                if let current = word { word = current.lowerBound..<range.upperBound }
            case .separator:
                endWord()
                endRun()
            }
        }
        endWord()
        endRun()
        return (pieces, matches)
    }

    /// The scalar whose UTF-8 encoding (valid: it comes from a `String`) starts at `offset`,
    /// and its width in bytes.
    @inline(__always)
    static func scalar(in bytes: [UInt8], at offset: Int) -> (Unicode.Scalar, Int) {
        let lead = UInt32(bytes[offset])
        func continuation(_ index: Int) -> UInt32 { UInt32(bytes[offset + index] & 0x3F) }
        let (value, width): (UInt32, Int)
        switch lead {
        case 0xC0..<0xE0: (value, width) = ((lead & 0x1F) << 6 | continuation(1), 2)
        case 0xE0..<0xF0: (value, width) = ((lead & 0x0F) << 12 | continuation(1) << 6 | continuation(2), 3)
        default:
            (value, width) = ((lead & 0x07) << 18 | continuation(1) << 12 | continuation(2) << 6 | continuation(3), 4)
        }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", width)
    }

    /// Whether the scalar at `range` is one the tokenizer leaves as it is (a Hangul syllable,
    /// a unified Han ideograph), so that its bytes are its term's.
    @inline(__always)
    static func foldsToItself(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        guard range.count == 3 else { return false }
        let value = scalar(in: bytes, at: range.lowerBound).0.value
        return (0xAC00...0xD7A3).contains(value) || (0x4E00...0x9FFF).contains(value)
            || (0x3400...0x4DBF).contains(value)
    }
}
