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
        var key = Keys.collectionPrefix(collection)
        key.append(tagMarker)
        key.append(contentsOf: tag.utf8)
        return key
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

    /// `search_documents`: the doc id, 4 bytes big-endian.
    static func document(_ docID: UInt32) -> [UInt8] {
        withUnsafeBytes(of: docID.bigEndian, Array.init)
    }

    static func docID(of key: UnsafeRawBufferPointer) throws -> UInt32 {
        guard key.count == 4 else { throw ByteReader.corrupt("search document key") }
        return UInt32(bigEndian: key.loadUnaligned(as: UInt32.self))
    }
}
