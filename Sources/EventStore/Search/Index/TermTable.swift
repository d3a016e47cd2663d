#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The distinct terms of one transaction's new documents, each stored once and named by a small
/// number, so that tokenizing a document allocates nothing per term and the segment is sorted
/// by comparing numbers.
///
/// Term bytes live in one arena; an open-addressing table (``FNV1a`` hashes, linear probing) finds
/// a term's number. While a document is built, each term remembers which document saw it last
/// and where it sits in that document's list, so repeated words add to one frequency without a
/// per-document dictionary.
struct TermTable {
    /// Every term's bytes, back to back; term `n` is `arena[starts[n]..<starts[n + 1]]`.
    private var arena: [UInt8] = []
    private var starts: [Int32] = [0]
    private var hashes: [UInt64] = []
    /// Slots of the hash table: a term number plus one, or 0 for an empty slot.
    private var slots: [Int32] = Array(repeating: 0, count: 1_024)
    /// Per term: the document (``beginDocument()``'s stamp) that saw it last, and its index in
    /// that document's term list.
    private var seenBy: [UInt32] = []
    private var indexInDocument: [Int32] = []
    private var document: UInt32 = 0

    /// The number of distinct terms.
    var count: Int { hashes.count }

    /// Starts a new document: terms seen from now on are counted afresh.
    mutating func beginDocument() { document &+= 1 }

    /// Adds one occurrence of `term` to the document being built: its number and, when the
    /// document has already seen the term, the index of its entry in the document's list.
    mutating func occurrence(of term: UnsafeRawBufferPointer) -> (term: UInt32, index: Int?) {
        let number = intern(term)
        if seenBy[number] == document { return (UInt32(number), Int(indexInDocument[number])) }
        seenBy[number] = document
        return (UInt32(number), nil)
    }

    /// Records where the document's new entry for `term` is (see ``occurrence(of:)``).
    mutating func setIndex(_ index: Int, of term: UInt32) { indexInDocument[Int(term)] = Int32(index) }

    /// Calls `body` with the bytes of term `number`.
    func withBytes<R>(of number: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = Int(starts[Int(number)])
        let end = Int(starts[Int(number) + 1])
        return try arena.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    /// The rank of every term in LMDB's key order (``compareBytes(_:_:)``): `ranks[n]` is the
    /// position of term `n` among all terms sorted by their bytes.
    ///
    /// Terms are sorted by their first 8 bytes as one big-endian integer (``bigEndianPrefix(_:from:)``),
    /// and by all their bytes only when those are equal: most comparisons are one integer compare.
    func ranks() -> [Int32] {
        arena.withUnsafeBytes { arena in
            func bytes(_ number: Int32) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: arena[Int(starts[Int(number)])..<Int(starts[Int(number) + 1])])
            }
            var order = (0..<Int32(count)).map { (prefix: bigEndianPrefix(bytes($0)), number: $0) }
            order.sort {
                $0.prefix != $1.prefix ? $0.prefix < $1.prefix : compareBytes(bytes($0.number), bytes($1.number)) < 0
            }
            var ranks = [Int32](repeating: 0, count: count)
            for (rank, entry) in order.enumerated() { ranks[Int(entry.number)] = Int32(rank) }
            return ranks
        }
    }

    /// The number of `term`, added when new.
    private mutating func intern(_ term: UnsafeRawBufferPointer) -> Int {
        let hash = Self.hash(term)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            let number = entry - 1
            if hashes[number] == hash && equals(number, term) { return number }
            slot = (slot + 1) & mask
        }
        let number = count
        arena.append(contentsOf: term)
        starts.append(Int32(arena.count))
        hashes.append(hash)
        seenBy.append(0)
        indexInDocument.append(0)
        slots[slot] = Int32(number + 1)
        if count * 2 > slots.count { grow() }
        return number
    }

    private func equals(_ number: Int, _ term: UnsafeRawBufferPointer) -> Bool {
        let start = Int(starts[number])
        let length = Int(starts[number + 1]) - start
        guard length == term.count else { return false }
        guard length > 0 else { return true }
        return arena.withUnsafeBytes { memcmp($0.baseAddress! + start, term.baseAddress!, length) == 0 }
    }

    private mutating func grow() {
        var grown = [Int32](repeating: 0, count: slots.count * 2)
        let mask = grown.count - 1
        for number in 0..<count {
            var slot = Int(truncatingIfNeeded: hashes[number]) & mask
            while grown[slot] != 0 { slot = (slot + 1) & mask }
            grown[slot] = Int32(number + 1)
        }
        slots = grown
    }

    /// ``FNV1a`` of `bytes`, mixed at the end so the low bits (the slot) depend on every byte.
    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = FNV1a()
        hash.combine(bytes: bytes)
        return hash.state ^ (hash.state >> 29)
    }
}
