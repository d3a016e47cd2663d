/// One posting: a document version that holds a term, with the term's weighted frequency there
/// and the document's weighted length (so scoring needs no other lookup), and where the term
/// stands in the document (its encoded ``PositionList``; empty for tags and for lists stored
/// without positions). The positions are the stored bytes themselves, valid while the
/// transaction that read them is open.
struct Posting: Equatable {
    var docID: UInt32
    var frequency: UInt32
    var length: UInt32
    var positions = UnsafeRawBufferPointer(start: nil, count: 0)

    static func == (lhs: Posting, rhs: Posting) -> Bool {
        lhs.docID == rhs.docID && lhs.frequency == rhs.frequency && lhs.length == rhs.length
            && lhs.positions.elementsEqual(rhs.positions)
    }
}

/// The postings of one term in one segment, as stored in `search_segments`.
///
/// ```
/// u8      flags (bit 0: term positions; other bits 0)
/// varint  count (≥ 1)
/// varint  the postings' byte size (only with positions)
/// count × varint doc id delta (the first is the doc id itself; then ≥ 1: ids strictly grow),
///         varint weighted frequency, varint weighted document length,
///         varint positions' byte size (only with positions)
/// then, with positions: each posting's positions (``PositionList``), in posting order
/// ```
///
/// Postings are in doc-id order, so merging segments and intersecting terms are linear walks.
/// The positions follow all the postings rather than each one, so a query that needs no
/// positions reads the postings as densely as without them.
enum PostingList {
    static let flagsWithoutPositions: UInt8 = 0
    static let flagsWithPositions: UInt8 = 1

    /// Encodes postings in doc-id order (at least one), with their positions when `positions`.
    static func encode(_ postings: some Collection<Posting>, positions: Bool = false, into writer: inout ByteWriter) {
        var builder = Builder(positions: positions)
        for posting in postings { builder.append(posting) }
        builder.encode(into: &writer)
    }

    static func encoded(_ postings: some Collection<Posting>, positions: Bool = false) -> [UInt8] {
        var writer = ByteWriter(capacity: 2 + postings.count * 4)
        encode(postings, positions: positions, into: &writer)
        return writer.bytes
    }

    /// Collects one list's postings (in doc-id order) and encodes them.
    struct Builder {
        private(set) var positions: Bool
        private(set) var count = 0
        private var postings = ByteWriter(capacity: 256)
        private var positionBytes = ByteWriter(capacity: 256)
        private var previous: UInt32 = 0

        init(positions: Bool) { self.positions = positions }

        mutating func append(_ posting: Posting) {
            postings.write(varint: UInt64(posting.docID &- previous))
            postings.write(varint: UInt64(posting.frequency))
            postings.write(varint: UInt64(posting.length))
            if positions {
                postings.write(varint: posting.positions.count)
                positionBytes.write(raw: posting.positions)
            }
            previous = posting.docID
            count += 1
        }

        /// Appends the postings of the stored list `list` whose documents `isLive` accepts, and
        /// returns how many postings the list holds (live or not). Their doc ids must follow the
        /// builder's last one (a later segment's list).
        ///
        /// A run of consecutive live postings is copied as stored: its postings' bytes (their
        /// doc ids are deltas from the posting before, which the run holds too) and their
        /// positions. Only the first doc id of a run is written again, as a delta from the
        /// builder's last posting: merging reads each posting's varints once and writes none.
        mutating func append(liveOf list: UnsafeRawBufferPointer, isLive: (UInt32) throws -> Bool) throws -> Int {
            var decoder = try Decoder(list)
            guard decoder.hasPositions == positions else {
                // Lists without positions into a list with them: each posting is written again.
                while let posting = try decoder.next() {
                    if try isLive(posting.docID) { append(posting) }
                }
                return decoder.count
            }
            var run: (postings: Range<Int>, positions: Range<Int>)?
            func copyRun() {
                guard let open = run else { return }
                postings.write(raw: UnsafeRawBufferPointer(rebasing: list[open.postings]))
                if positions { positionBytes.write(raw: UnsafeRawBufferPointer(rebasing: list[open.positions])) }
                run = nil
            }
            while let stored = try decoder.nextStored() {
                guard try isLive(stored.docID) else {
                    copyRun()
                    continue
                }
                if let open = run {
                    run = (
                        open.postings.lowerBound..<stored.rest.upperBound,
                        open.positions.lowerBound..<stored.positions.upperBound
                    )
                } else {
                    postings.write(varint: UInt64(stored.docID &- previous))
                    run = (stored.rest, stored.positions)
                }
                previous = stored.docID
                count += 1
            }
            copyRun()
            return decoder.count
        }

        /// Appends the list to `writer`.
        func encode(into writer: inout ByteWriter) {
            writer.write(positions ? PostingList.flagsWithPositions : PostingList.flagsWithoutPositions)
            writer.write(varint: count)
            if positions { writer.write(varint: postings.bytes.count) }
            writer.write(raw: postings.bytes)
            if positions { writer.write(raw: positionBytes.bytes) }
        }

        /// Empties the builder for another list, with positions when `positions`.
        mutating func removeAll(positions: Bool) {
            self.positions = positions
            postings.bytes.removeAll(keepingCapacity: true)
            positionBytes.bytes.removeAll(keepingCapacity: true)
            previous = 0
            count = 0
        }
    }

    /// The number of postings a list holds (dead documents included), from its header.
    static func count(in list: UnsafeRawBufferPointer) throws -> Int {
        try Decoder(list).count
    }

    /// Reads a stored list posting by posting. Malformed bytes throw ``EventStoreError/Code/corrupt``:
    /// a count that does not fit, doc ids that do not grow or overflow, trailing bytes.
    struct Decoder {
        private let buffer: UnsafeRawBufferPointer
        private var offset: Int
        /// The postings the list holds.
        let count: Int
        /// Whether the list stores term positions.
        let hasPositions: Bool
        private var read = 0
        private var previous: UInt32 = 0
        /// Where the postings end (the positions begin), and the next posting's positions.
        private let postingsEnd: Int
        private var positionsOffset: Int

        init(_ list: UnsafeRawBufferPointer) throws {
            var reader = ByteReader(list)
            let flags = try reader.readByte()
            guard flags == PostingList.flagsWithoutPositions || flags == PostingList.flagsWithPositions else {
                throw ByteReader.corrupt("posting list flags")
            }
            hasPositions = flags == PostingList.flagsWithPositions
            count = try reader.readCount(minimumBytesEach: hasPositions ? 4 : 3)
            guard count > 0 else { throw ByteReader.corrupt("empty posting list") }
            if hasPositions {
                let size = try reader.readVarint()
                guard size <= UInt64(list.count - reader.offset) else { throw ByteReader.corrupt("posting list size") }
                postingsEnd = reader.offset + Int(size)
            } else {
                postingsEnd = list.count
            }
            buffer = list
            offset = reader.offset
            positionsOffset = postingsEnd
        }

        /// A varint of at most 5 bytes (32 bits), checked against the end of the list.
        @inline(__always)
        private mutating func varint32() throws -> UInt32 {
            guard offset < postingsEnd else { throw ByteReader.corrupt("posting list") }
            let first = buffer[offset]
            offset += 1
            if first < 0x80 { return UInt32(first) }
            var result = UInt64(first & 0x7F)
            var shift: UInt64 = 7
            while true {
                guard offset < postingsEnd, shift <= 28 else { throw ByteReader.corrupt("posting list varint") }
                let byte = buffer[offset]
                offset += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            guard result <= UInt64(UInt32.max) else { throw ByteReader.corrupt("posting list varint") }
            return UInt32(result)
        }

        /// Reads the next posting's doc id, or returns `nil` after the last (checking that no
        /// bytes trail the list).
        @inline(__always)
        private mutating func nextDocID() throws -> UInt32? {
            guard read < count else {
                guard offset == postingsEnd, positionsOffset == buffer.count else {
                    throw ByteReader.corrupt("posting list (trailing bytes)")
                }
                return nil
            }
            let delta = try varint32()
            guard read == 0 || delta > 0, delta <= UInt32.max - previous else {
                throw ByteReader.corrupt("posting list doc ids")
            }
            read += 1
            previous += delta
            return previous
        }

        /// Reads the posting's positions' size (with positions) and returns where they lie.
        @inline(__always)
        private mutating func nextPositions() throws -> Range<Int> {
            let start = positionsOffset
            if hasPositions {
                let size = Int(try varint32())
                guard size <= buffer.count - positionsOffset else { throw ByteReader.corrupt("posting list positions") }
                positionsOffset += size
            }
            return start..<positionsOffset
        }

        /// The next posting's doc id and where it is stored: its bytes after its doc id delta
        /// (frequency, length and positions' size) and its positions, or `nil` after the last.
        /// Checked as ``next()`` checks.
        @inline(__always)
        mutating func nextStored() throws -> (docID: UInt32, rest: Range<Int>, positions: Range<Int>)? {
            guard let docID = try nextDocID() else { return nil }
            let restStart = offset
            _ = try varint32()
            _ = try varint32()
            let positions = try nextPositions()
            return (docID, restStart..<offset, positions)
        }

        @inline(__always)
        mutating func next() throws -> Posting? {
            guard let docID = try nextDocID() else { return nil }
            let frequency = try varint32()
            let length = try varint32()
            let positions = try nextPositions()
            return Posting(
                docID: docID, frequency: frequency, length: length,
                positions: hasPositions
                    ? UnsafeRawBufferPointer(rebasing: buffer[positions]) : UnsafeRawBufferPointer(start: nil, count: 0)
            )
        }

        /// Every posting, checked to the end.
        static func decodeAll(_ list: UnsafeRawBufferPointer) throws -> [Posting] {
            var decoder = try Decoder(list)
            var postings: [Posting] = []
            postings.reserveCapacity(decoder.count)
            while let posting = try decoder.next() { postings.append(posting) }
            return postings
        }
    }
}
