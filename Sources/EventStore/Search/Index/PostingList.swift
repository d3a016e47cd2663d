/// One posting: a document version that holds a term, with the term's weighted frequency there
/// and the document's weighted length (so scoring needs no other lookup).
struct Posting: Equatable, Sendable {
    var docID: UInt32
    var frequency: UInt32
    var length: UInt32
}

/// The postings of one term in one segment, as stored in `search_segments`.
///
/// ```
/// u8      flags (0; bit 0 is reserved for term positions after each posting)
/// varint  count (≥ 1)
/// count × varint doc id delta (the first is the doc id itself; then ≥ 1: ids strictly grow),
///         varint weighted frequency, varint weighted document length
/// ```
///
/// Postings are in doc-id order, so merging segments and intersecting terms are linear walks.
enum PostingList {
    static let flagsWithoutPositions: UInt8 = 0

    /// Encodes postings in doc-id order (at least one).
    static func encode(_ postings: some Collection<Posting>, into writer: inout ByteWriter) {
        writer.write(flagsWithoutPositions)
        writer.write(varint: postings.count)
        var previous: UInt32 = 0
        for posting in postings {
            writer.write(varint: UInt64(posting.docID &- previous))
            writer.write(varint: UInt64(posting.frequency))
            writer.write(varint: UInt64(posting.length))
            previous = posting.docID
        }
    }

    static func encoded(_ postings: some Collection<Posting>) -> [UInt8] {
        var writer = ByteWriter(capacity: 2 + postings.count * 4)
        encode(postings, into: &writer)
        return writer.bytes
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
        private var read = 0
        private var previous: UInt32 = 0

        init(_ list: UnsafeRawBufferPointer) throws {
            var reader = ByteReader(list)
            let flags = try reader.readByte()
            guard flags == PostingList.flagsWithoutPositions else { throw ByteReader.corrupt("posting list flags") }
            count = try reader.readCount(minimumBytesEach: 3)
            guard count > 0 else { throw ByteReader.corrupt("empty posting list") }
            buffer = list
            offset = reader.offset
        }

        /// A varint of at most 5 bytes (32 bits), checked against the end of the list.
        @inline(__always)
        private mutating func varint32() throws -> UInt32 {
            guard offset < buffer.count else { throw ByteReader.corrupt("posting list") }
            let first = buffer[offset]
            offset += 1
            if first < 0x80 { return UInt32(first) }
            var result = UInt64(first & 0x7F)
            var shift: UInt64 = 7
            while true {
                guard offset < buffer.count, shift <= 28 else { throw ByteReader.corrupt("posting list varint") }
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
                guard offset == buffer.count else { throw ByteReader.corrupt("posting list (trailing bytes)") }
                return nil
            }
            let delta = try varint32()
            guard read == 0 || delta > 0, delta <= UInt32.max - previous else {
                throw ByteReader.corrupt("posting list doc ids")
            }
            let docID = previous + delta
            let frequency = try varint32()
            let length = try varint32()
            read += 1
            previous = docID
            return Posting(docID: docID, frequency: frequency, length: length)
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
