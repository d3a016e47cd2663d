/// Key encodings of the search index's databases (see the Storage format article).
enum IndexKeys {
    /// Tags are indexed as the term `0x01 tag` (filter-only, frequency 0).
    static let tagMarker: UInt8 = 0x01

    /// A term of a collection, as it follows the segment id in `search_segments`:
    /// `collection NUL term` (a tag: `collection NUL 0x01 tag`).
    static func term(collection: String, term: String) -> [UInt8] {
        var key = Keys.collectionPrefix(collection)
        key.append(contentsOf: term.utf8)
        return key
    }

    static func tag(collection: String, tag: String) -> [UInt8] {
        term(collection: collection, term: tagTerm(tag))
    }

    /// A tag as a term: `0x01 tag` (no index term starts with a control character).
    static func tagTerm(_ tag: String) -> String {
        String(UnicodeScalar(tagMarker)) + tag
    }

    /// `search_segments`: segment id (4 bytes, big-endian), then a term key.
    static func segment(_ segment: UInt32, _ term: [UInt8] = []) -> [UInt8] {
        var key = [UInt8]()
        key.reserveCapacity(4 + term.count)
        withUnsafeBytes(of: segment.bigEndian) { key.append(contentsOf: $0) }
        key.append(contentsOf: term)
        return key
    }

    /// The segment id a `search_segments` key starts with.
    static func segmentID(of key: UnsafeRawBufferPointer) throws -> UInt32 {
        guard key.count >= 4 else { throw ByteReader.corrupt("search segment key") }
        return UInt32(bigEndian: key.loadUnaligned(as: UInt32.self))
    }

    /// `search_documents` keys and `search_items` values: the doc id, 4 bytes big-endian.
    static func document(_ docID: UInt32) -> [UInt8] {
        withUnsafeBytes(of: docID.bigEndian, Array.init)
    }

    /// Decodes a stored doc id: a `search_documents` key or a `search_items` value.
    static func docID(of bytes: UnsafeRawBufferPointer) throws -> UInt32 {
        guard bytes.count == 4 else { throw ByteReader.corrupt("search document id") }
        return UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))
    }
}
