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

        @inline(__always)
        mutating func next() throws -> Posting? {
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
            let docID = previous + delta
            let frequency = try varint32()
            let length = try varint32()
            var positions = UnsafeRawBufferPointer(start: nil, count: 0)
            if hasPositions {
                let size = Int(try varint32())
                guard size <= buffer.count - positionsOffset else { throw ByteReader.corrupt("posting list positions") }
                positions = UnsafeRawBufferPointer(rebasing: buffer[positionsOffset..<positionsOffset + size])
                positionsOffset += size
            }
            read += 1
            previous = docID
            return Posting(docID: docID, frequency: frequency, length: length, positions: positions)
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
