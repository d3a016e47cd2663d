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

    /// A word or CJK run of the text: its UTF-8 range, the parts that matched, and which query
    /// terms (by index) matched it.
    private struct Piece {
        var range: Range<Int>
        var matched: [Range<Int>] = []
        var terms: Set<Int> = []
    }

    /// The highlight of `text`, or `nil` when no query term matches it.
    func highlight(_ text: String) -> Highlight? {
        guard !terms.isEmpty else { return nil }
        let pieces = self.pieces(of: text)
        guard pieces.contains(where: { !$0.matched.isEmpty }) else { return nil }
        let (start, end) = window(pieces)
        let bytes = Array(text.utf8)
        let from = start == 0 ? 0 : pieces[start].range.lowerBound
        let to = end == pieces.count ? bytes.count : pieces[end - 1].range.upperBound
        var ranges: [Range<Int>] = []
        for piece in pieces[start..<end] {
            for range in piece.matched { ranges.append((range.lowerBound - from)..<(range.upperBound - from)) }
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
        var counts = [Int](repeating: 0, count: terms.count)
        var distinct = 0
        var matched = 0
        for index in pieces.indices {
            for term in pieces[index].terms {
                if counts[term] == 0 { distinct += 1 }
                counts[term] += 1
            }
            if !pieces[index].matched.isEmpty { matched += 1 }
            let start = index - size + 1
            if start > 0 {
                let leaving = pieces[start - 1]
                for term in leaving.terms {
                    counts[term] -= 1
                    if counts[term] == 0 { distinct -= 1 }
                }
                if !leaving.matched.isEmpty { matched -= 1 }
            }
            if start >= 0, (distinct, matched) > (best.distinct, best.matched) {
                best = (distinct, matched, start)
            }
        }
        // Begun a quarter of a window before the window's first match (as far as its last match
        // leaves room), within the text.
        let matches = (best.start..<best.start + size).filter { !pieces[$0].matched.isEmpty }
        let first = matches.first ?? best.start
        let slack = size - ((matches.last ?? first) - first + 1)
        let start = max(0, min(first - min(size / 4, slack), pieces.count - size))
        return (start, start + size)
    }

    /// Cuts `text` into words and CJK runs and marks what the query terms match.
    private func pieces(of text: String) -> [Piece] {
        var pieces: [Piece] = []
        var word: Range<Int>?
        var run: [Range<Int>] = []
        let bytes = Array(text.utf8)
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
                        piece.terms.insert(index)
                        piece.matched = [range]
                    }
                }
            } else {
                let folded = tokenizer.indexTerms(in: substring(range))
                for (index, term) in terms.enumerated()
                where folded.contains(where: { $0 == term.text || (term.isPrefix && $0.hasPrefix(term.text)) }) {
                    piece.terms.insert(index)
                    piece.matched = [range]
                }
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
                    piece.terms.insert(index)
                    marked[0] = true
                }
            } else {
                for position in 0..<(run.count - 1) {
                    let bigram = tokenizer.indexTerms(
                        in: substring(run[position].lowerBound..<run[position + 1].upperBound))
                    for (index, term) in terms.enumerated() {
                        if bigram.contains(term.text) {
                            marked[position] = true
                            marked[position + 1] = true
                        } else if term.isPrefix, bigram.contains(where: { $0.hasPrefix(term.text) }) {
                            marked[position] = true
                        } else {
                            continue
                        }
                        piece.terms.insert(index)
                    }
                }
            }
            // Adjacent marked characters make one range.
            var position = 0
            while position < run.count {
                guard marked[position] else {
                    position += 1
                    continue
                }
                var end = position
                while end + 1 < run.count && marked[end + 1] { end += 1 }
                piece.matched.append(run[position].lowerBound..<run[end].upperBound)
                position = end + 1
            }
            run = []
            pieces.append(piece)
        }

        var offset = 0
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
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
        return pieces
    }
}
