/// Where a term stands in a document: the ordinal of its word, and for a CJK bigram its place
/// in its run (`동기화를` is one word of three bigrams: `동기` at offset 0, `기화` at 1, `화를` at 2).
///
/// Words are counted across the document's searchable strings in order (fields in the order of
/// their names, array elements in theirs), with one unused ordinal between two strings, so
/// that no phrase matches across a field's end. Punctuation does not count: `sync, design` are
/// adjacent words, as they are to FTS5.
struct TermPosition: Comparable, Hashable, Sendable {
    var word: UInt32
    var offset: UInt32

    static func < (lhs: TermPosition, rhs: TermPosition) -> Bool {
        lhs.word != rhs.word ? lhs.word < rhs.word : lhs.offset < rhs.offset
    }

    /// How far `later` stands after `self`, in words (1: the next word, or the next bigram of the
    /// same run); a term before `self` counts one more than its distance, so order matters.
    func distance(to later: TermPosition) -> UInt32 {
        if later.word > word { return later.word - word }
        if later.word == word && later.offset > offset { return 1 }
        // Saturating: positions come from the store, and a damaged one must not trap.
        return word - later.word == .max ? .max : word - later.word + 1
    }
}

/// Counts term positions as a tokenizer emits terms (see ``Tokenizer/TermKind``).
struct PositionCounter {
    private var nextWord: UInt32 = 0
    private var current = TermPosition(word: 0, offset: 0)

    /// The position of the next term, of `kind`.
    mutating func advance(_ kind: Tokenizer.TermKind) -> TermPosition {
        switch kind {
        case .word, .unigram, .firstBigram:
            current = TermPosition(word: nextWord, offset: 0)
            nextWord &+= 1
        case .bigram:
            current.offset &+= 1
        }
        return current
    }

    /// Leaves one word ordinal unused: a new string (a field, an array element) begins.
    mutating func skipWord() { nextWord &+= 1 }
}

/// The positions of one term in one document, as stored after its posting (see
/// ``PostingList``): in increasing order, each as a varint `(word delta << 1) | hasOffset`
/// followed, when `hasOffset`, by a varint offset. The first word delta is the word itself.
/// Most positions of Latin text take one byte.
enum PositionList {
    /// Appends the encoding of `positions` (increasing) to `writer`.
    static func encode(_ positions: some Sequence<TermPosition>, into writer: inout ByteWriter) {
        var previous: UInt32 = 0
        for position in positions {
            let delta = UInt64(position.word &- previous)
            writer.write(varint: delta << 1 | (position.offset > 0 ? 1 : 0))
            if position.offset > 0 { writer.write(varint: UInt64(position.offset)) }
            previous = position.word
        }
    }

    /// Reads positions one by one; malformed bytes (a varint that does not fit, positions that
    /// do not grow) throw ``EventStoreError/Code/corrupt``.
    struct Decoder {
        private var reader: ByteReader
        private var previous: TermPosition?

        init(_ bytes: UnsafeRawBufferPointer) { reader = ByteReader(bytes) }

        mutating func next() throws -> TermPosition? {
            guard !reader.isAtEnd else { return nil }
            let head = try reader.readVarint()
            let delta = head >> 1
            let offset = head & 1 == 1 ? try reader.readVarint() : 0
            let base = UInt64(previous?.word ?? 0)
            guard offset > 0 || head & 1 == 0, offset <= UInt64(UInt32.max), base + delta <= UInt64(UInt32.max) else {
                throw ByteReader.corrupt("term positions")
            }
            let position = TermPosition(word: UInt32(base + delta), offset: UInt32(offset))
            if let previous, !(previous < position) { throw ByteReader.corrupt("term positions (not increasing)") }
            previous = position
            return position
        }

        /// Every position, checked to the end.
        static func decodeAll(_ bytes: UnsafeRawBufferPointer) throws -> [TermPosition] {
            var decoder = Decoder(bytes)
            var positions: [TermPosition] = []
            while let position = try decoder.next() { positions.append(position) }
            return positions
        }

        /// Every position, into `positions` (emptied first; its storage is reused).
        static func decode(_ bytes: UnsafeRawBufferPointer, into positions: inout [TermPosition]) throws {
            positions.removeAll(keepingCapacity: true)
            var decoder = Decoder(bytes)
            while let position = try decoder.next() { positions.append(position) }
        }
    }
}
