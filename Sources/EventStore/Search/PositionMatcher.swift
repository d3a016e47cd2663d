/// Reads the positions of a candidate's matched terms to check phrases and score proximity,
/// reusing its buffers from candidate to candidate.
///
/// A term whose posting has no positions (a store indexed before positions existed, opened
/// read-only) neither fails a phrase nor counts for proximity.
struct PositionMatcher {
    private var decoded: [[TermPosition]] = []
    /// Which terms' positions are in `decoded` for the current candidate (kept between
    /// candidates: an array made per candidate is allocated through the standard library's
    /// unspecialized code, about 500 instructions).
    private var known: [Bool] = []
    /// Positions of a further term of a group, before they join the slot's.
    private var scratch: [TermPosition] = []

    private mutating func decode(_ slot: Int, _ bytes: UnsafeRawBufferPointer) throws {
        while decoded.count <= slot { decoded.append([]) }
        try PositionList.Decoder.decode(bytes, into: &decoded[slot])
    }

    /// Whether the candidate holds the phrase: `positions(term)` gives its matched term's
    /// positions (see ``QueryText/phraseMatches(_:positions:)``).
    mutating func matches(
        _ phrase: [QueryText.PhraseToken], positions: (_ term: Int) -> UnsafeRawBufferPointer
    ) throws -> Bool {
        for (slot, token) in phrase.enumerated() {
            let bytes = positions(token.term)
            if bytes.isEmpty { return true }
            try decode(slot, bytes)
        }
        return QueryText.phraseMatches(phrase, positions: decoded.prefix(phrase.count))
    }

    /// Whether the candidate holds the phrase, where a query term may stand for several index
    /// terms (a prefix's expansions, close terms): `positions(term)` gives the positions of each
    /// one the candidate holds, which the phrase may use alike.
    mutating func matches(
        _ phrase: [QueryText.PhraseToken], positionsOfEach positions: (_ term: Int) throws -> [UnsafeRawBufferPointer]
    ) throws -> Bool {
        for (slot, token) in phrase.enumerated() {
            let lists = try positions(token.term).filter { !$0.isEmpty }
            guard let first = lists.first else { return true }
            try decode(slot, first)
            guard lists.count > 1 else { continue }
            for bytes in lists.dropFirst() {
                try PositionList.Decoder.decode(bytes, into: &scratch)
                decoded[slot].append(contentsOf: scratch)
            }
            decoded[slot].sort(by: <)
        }
        return QueryText.phraseMatches(phrase, positions: decoded.prefix(phrase.count))
    }

    /// The mean closeness of consecutive query terms `0..<terms` in the candidate (0 when none
    /// can be measured).
    mutating func closeness(terms: Int, positions: (_ term: Int) -> UnsafeRawBufferPointer) throws -> Double {
        while known.count < terms { known.append(false) }
        for term in 0..<terms {
            let bytes = positions(term)
            known[term] = !bytes.isEmpty
            if known[term] { try decode(term, bytes) }
        }
        var sum = 0.0
        var pairs = 0
        for term in 0..<terms - 1 where known[term] && known[term + 1] {
            sum += QueryText.closeness(decoded[term], decoded[term + 1])
            pairs += 1
        }
        return pairs == 0 ? 0 : sum / Double(pairs)
    }
}
