import LMDB

/// An entry of `search_segments`: the posting lists of one or more adjacent terms of a segment,
/// keyed by the segment id and the first of those terms.
///
/// A term whose list is large is an entry of its own, whose value is the list (``PostingList``).
/// Smaller lists are packed into **blocks** of adjacent terms, so a segment is a few entries
/// rather than one per term: a commit puts a few dozen keys instead of thousands, a merge reads,
/// writes and deletes as few, and pages hold postings rather than keys and node headers.
///
/// ```
/// u8      0x80 (a list starts with its flags, 0 or 1)
/// varint  term count (≥ 2)
/// varint  byte size of the terms that follow
/// count × varint length shared with the previous term (0 for the first), varint length of the
///         rest, the rest, varint byte size of the term's list
/// the lists, back to back, in term order
/// ```
///
/// Terms grow strictly and the first is the key's. A block and its key stay within
/// ``maxBytes``, so LMDB keeps several on a leaf page rather than on overflow pages.
/// Decoding checks every bound: damaged bytes are a `corrupt` error, never a crash.
enum SegmentEntry {
    /// The first byte of a block.
    static let blockMarker: UInt8 = 0x80
    /// The most bytes of key and value a block takes: about an eighth of a 4 KiB leaf page, so
    /// that pages still fill well when LMDB splits them in the middle (a merge's output goes
    /// between older segments). Blocks of up to 1,960 bytes (two per page) left the segments
    /// 23% larger; 480 bytes keep them within 6% of one entry per term.
    static let maxBytes = 480
    /// The longest term key (LMDB keys are at most 511 bytes, 4 of them the segment id).
    static let maxTermBytes = 507

    /// Calls `body` with each term of the entry whose key's term is `first` and its list, in
    /// term order, until `body` returns `false`. The term's bytes are valid only during the call.
    static func forEachTerm(
        first: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
        _ body: (_ term: UnsafeRawBufferPointer, _ list: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard value.first == blockMarker else {
            _ = try body(first, value)
            return
        }
        var reader = ByteReader(value)
        _ = try reader.readByte()
        let count = try reader.readCount(minimumBytesEach: 4)
        guard count >= 2 else { throw ByteReader.corrupt("search segment block (fewer than 2 terms)") }
        let headerSize = try reader.readCount()
        var header = ByteReader(try reader.readBytes(headerSize))
        var listOffset = reader.offset
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxTermBytes) { term in
            var length = 0
            for index in 0..<count {
                let sharedBytes = try header.readVarint()
                let rest = try header.readBytes(try header.readCount())
                guard sharedBytes <= UInt64(length), case let shared = Int(sharedBytes), index > 0 || shared == 0,
                    shared + rest.count <= maxTermBytes
                else {
                    throw ByteReader.corrupt("search segment block term")
                }
                // Strictly growing, and canonical: `shared` is all the previous term has in
                // common with this one (its next byte is greater), or the whole previous term.
                if index > 0 {
                    guard let head = rest.first, shared == length || head > term[shared] else {
                        throw ByteReader.corrupt("search segment block order")
                    }
                }
                for (offset, byte) in rest.enumerated() { term[shared + offset] = byte }
                length = shared + rest.count
                let current = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(term)[0..<length])
                if index == 0 {
                    guard current.elementsEqual(first) else { throw ByteReader.corrupt("search segment block key") }
                }
                let listBytes = try header.readVarint()
                guard listBytes > 0, listBytes <= UInt64(value.count - listOffset) else {
                    throw ByteReader.corrupt("search segment block list size")
                }
                let size = Int(listBytes)
                let list = UnsafeRawBufferPointer(rebasing: value[listOffset..<listOffset + size])
                listOffset += size
                guard try body(current, list) else { return }
            }
            guard header.isAtEnd, listOffset == value.count else {
                throw ByteReader.corrupt("search segment block (trailing bytes)")
            }
        }
    }

    /// The list of `term` in the entry whose key's term is `first`, or `nil` when it has none.
    static func list(
        of term: UnsafeRawBufferPointer, first: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
    ) throws -> UnsafeRawBufferPointer? {
        var found: UnsafeRawBufferPointer?
        try forEachTerm(first: first, value: value) { current, list in
            let order = compareBytes(current, term)
            if order == 0 { found = list }
            return order < 0
        }
        return found
    }

    /// Moves `cursor` to the first entry of the segment whose key is `segment` (its 4-byte id)
    /// that may hold `term` or a later term: the entry keyed by `term` itself or, when there is
    /// none, the entry before that key when it belongs to the segment (a block whose terms may
    /// run past `term`), else the first entry after it. Returns that entry, which may belong to
    /// a later segment (callers check the key), or `nil` at the end of the database.
    static func seek(_ cursor: Cursor, segment: [UInt8], term: some Collection<UInt8>) throws -> CursorEntry? {
        let target = segment + term
        let landed = try target.withUnsafeBytes { try cursor.seek(atLeast: $0) }
        if let landed, landed.key.elementsEqual(target) { return landed }
        let before = try landed == nil ? cursor.last() : cursor.previous()
        if let before, before.key.starts(with: segment) { return before }
        return try target.withUnsafeBytes { try cursor.seek(atLeast: $0) }
    }

    /// The list of `term` in segment `segment` (its key prefix), read with `cursor`; `nil` when
    /// the segment does not hold the term.
    static func list(of term: [UInt8], segment: [UInt8], cursor: Cursor) throws -> UnsafeRawBufferPointer? {
        guard let entry = try seek(cursor, segment: segment, term: term), entry.key.starts(with: segment) else {
            return nil
        }
        return try term.withUnsafeBytes { term in
            try list(of: term, first: firstTerm(of: entry.key, segment: segment), value: entry.value)
        }
    }

    /// The term of an entry's key: what follows the segment id.
    static func firstTerm(of key: UnsafeRawBufferPointer, segment: [UInt8]) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: key[(key.startIndex + segment.count)...])
    }

    /// Collects a segment's terms, in increasing order, with their lists, and writes them as
    /// entries: a block of adjacent terms while they fit in ``maxBytes``, a list alone when it
    /// does not fit with others (or no other term came with it).
    struct Builder {
        /// The segment's key prefix (its id).
        let segment: [UInt8]
        private var first: [UInt8] = []
        private var previous: [UInt8] = []
        private var count = 0
        private var header = ByteWriter(capacity: 512)
        private var lists = ByteWriter(capacity: 2_048)

        init(segment: UInt32) {
            self.segment = IndexKeys.segment(segment)
        }

        /// Whether no term waits to be written.
        var isEmpty: Bool { count == 0 }

        /// Adds `term` (greater than every term added before) and its list; writes the entry
        /// under way first, through `put`, when the term does not fit in it.
        mutating func add(
            term: UnsafeRawBufferPointer, list: UnsafeRawBufferPointer,
            put: (_ key: [UInt8], _ value: [UInt8]) throws -> Void
        ) rethrows {
            assert(count == 0 || previous.withUnsafeBytes { compareBytes($0, term) } < 0, "terms must grow")
            var shared = 0
            if count > 0 {
                shared = commonPrefix(previous, term)
                let added = 3 * 5 + (term.count - shared) + list.count
                if segment.count + first.count + 12 + header.bytes.count + lists.bytes.count + added > maxBytes {
                    try flush(put: put)
                    shared = 0
                }
            }
            header.write(varint: shared)
            header.write(varint: term.count - shared)
            header.write(raw: UnsafeRawBufferPointer(rebasing: term[(term.startIndex + shared)...]))
            header.write(varint: list.count)
            lists.write(raw: list)
            if count == 0 {
                first.removeAll(keepingCapacity: true)
                first.append(contentsOf: term)
            }
            previous.removeAll(keepingCapacity: true)
            previous.append(contentsOf: term)
            count += 1
        }

        /// Writes the entry under way, if any, through `put`.
        mutating func flush(put: (_ key: [UInt8], _ value: [UInt8]) throws -> Void) rethrows {
            guard count > 0 else { return }
            let key = segment + first
            if count == 1 {
                // A term alone: its list is the value.
                try put(key, lists.bytes)
            } else {
                var value = ByteWriter(capacity: 12 + header.bytes.count + lists.bytes.count)
                value.write(SegmentEntry.blockMarker)
                value.write(varint: count)
                value.write(varint: header.bytes.count)
                value.write(raw: header.bytes)
                value.write(raw: lists.bytes)
                try put(key, value.bytes)
            }
            header.bytes.removeAll(keepingCapacity: true)
            lists.bytes.removeAll(keepingCapacity: true)
            count = 0
        }

        private func commonPrefix(_ lhs: [UInt8], _ rhs: UnsafeRawBufferPointer) -> Int {
            lhs.withUnsafeBytes { lhs in
                var length = 0
                let limit = min(lhs.count, rhs.count)
                while length < limit && lhs[length] == rhs[length] { length += 1 }
                return length
            }
        }
    }
}
