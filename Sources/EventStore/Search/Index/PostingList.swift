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
        private var reader: ByteReader
        /// The postings the list holds.
        let count: Int
        private var read = 0
        private var previous: UInt32 = 0

        init(_ list: UnsafeRawBufferPointer) throws {
            reader = ByteReader(list)
            let flags = try reader.readByte()
            guard flags == PostingList.flagsWithoutPositions else { throw ByteReader.corrupt("posting list flags") }
            count = try reader.readCount(minimumBytesEach: 3)
            guard count > 0 else { throw ByteReader.corrupt("empty posting list") }
        }

        @inline(__always)
        mutating func next() throws -> Posting? {
            guard read < count else {
                guard reader.isAtEnd else { throw ByteReader.corrupt("posting list (trailing bytes)") }
                return nil
            }
            let delta = try reader.readVarint()
            guard read == 0 || delta > 0, delta <= UInt64(UInt32.max - previous) else {
                throw ByteReader.corrupt("posting list doc ids")
            }
            let docID = previous + UInt32(delta)
            let frequency = try reader.readVarint()
            let length = try reader.readVarint()
            guard frequency <= UInt64(UInt32.max), length <= UInt64(UInt32.max) else {
                throw ByteReader.corrupt("posting list frequencies")
            }
            read += 1
            previous = docID
            return Posting(docID: docID, frequency: UInt32(frequency), length: UInt32(length))
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
