// libFuzzer target: the search index's stored formats — a term's posting list in a segment,
// a segment entry (a block of terms' lists: the input's first byte is the length of the key's
// term, which follows, then the value), the segment directory, a document entry — on arbitrary
// bytes. Built by Tools/Fuzz/run.sh.
@testable import EventStore

/// libFuzzer's entry point: checks one input, traps on a broken invariant, returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSegment(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let postings = try? PostingList.Decoder.decodeAll(bytes), let decoder = try? PostingList.Decoder(bytes) {
        precondition(!postings.isEmpty, "an empty posting list decoded")
        precondition(zip(postings, postings.dropFirst()).allSatisfy { $0.docID < $1.docID }, "doc ids must grow")
        precondition(decoder.hasPositions || postings.allSatisfy { $0.positions.isEmpty }, "positions without the flag")
        let again = PostingList.encoded(postings, positions: decoder.hasPositions).withUnsafeBytes {
            try? PostingList.Decoder.decodeAll($0)
        }
        precondition(again == postings, "posting list round trip changed the postings")
        precondition((try? PostingList.count(in: bytes)) == postings.count, "header count differs from the postings")
        // Merged as a merge does (runs of live postings copied as stored), with the documents
        // whose ids' low bits match the last byte dead: the same postings as built posting by
        // posting (the bytes may differ: a stored varint that is not minimal is copied as it is).
        let deadBits = UInt32(bytes.last ?? 0) & 3
        func isLive(_ docID: UInt32) -> Bool { docID & 3 != deadBits }
        var merged = PostingList.Builder(positions: decoder.hasPositions)
        var expected = PostingList.Builder(positions: decoder.hasPositions)
        precondition((try? merged.append(liveOf: bytes, isLive: isLive)) == postings.count, "merge read a count")
        for posting in postings where isLive(posting.docID) { expected.append(posting) }
        var mergedBytes = ByteWriter()
        var expectedBytes = ByteWriter()
        merged.encode(into: &mergedBytes)
        expected.encode(into: &expectedBytes)
        precondition(merged.count == expected.count, "merge kept another number of postings")
        if expected.count > 0 {
            let (mergedPostings, expectedPostings) = (
                mergedBytes.bytes.withUnsafeBytes { try? PostingList.Decoder.decodeAll($0) },
                expectedBytes.bytes.withUnsafeBytes { try? PostingList.Decoder.decodeAll($0) }
            )
            precondition(mergedPostings != nil && mergedPostings == expectedPostings, "merge copied runs wrong")
        }
        // Each posting's positions either decode to growing positions that survive a round
        // trip, or are corrupt.
        for posting in postings {
            guard let positions = try? PositionList.Decoder.decodeAll(posting.positions) else { continue }
            precondition(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 }, "positions must grow")
            var writer = ByteWriter()
            PositionList.encode(positions, into: &writer)
            let again = writer.bytes.withUnsafeBytes { try? PositionList.Decoder.decodeAll($0) }
            precondition(again == positions, "positions round trip changed them")
        }
    }
    if let length = bytes.first, Int(length) < bytes.count {
        let first = UnsafeRawBufferPointer(rebasing: bytes[1..<1 + Int(length)])
        let value = UnsafeRawBufferPointer(rebasing: bytes[(1 + Int(length))...])
        var terms: [(term: [UInt8], list: [UInt8])] = []
        let decoded: Void? = try? SegmentEntry.forEachTerm(first: first, value: value) {
            terms.append((Array($0), Array($1)))
            return true
        }
        if decoded != nil {
            precondition(
                terms.first.map { $0.term.elementsEqual(first) } ?? false, "an entry starts with its key's term")
            precondition(
                zip(terms, terms.dropFirst()).allSatisfy { $0.term.lexicographicallyPrecedes($1.term) },
                "terms must grow")
            // Written again by the builder (blocks of its own choosing), the terms and lists read back the same.
            if value.first == SegmentEntry.blockMarker, terms.allSatisfy({ $0.list.first != SegmentEntry.blockMarker })
            {
                var builder = SegmentEntry.Builder(segment: 1)
                var again: [(term: [UInt8], list: [UInt8])] = []
                let put = { (key: [UInt8], value: [UInt8]) in
                    try key.withUnsafeBytes { key in
                        try value.withUnsafeBytes { value in
                            try SegmentEntry.forEachTerm(
                                first: UnsafeRawBufferPointer(rebasing: key[4...]), value: value
                            ) {
                                again.append((Array($0), Array($1)))
                                return true
                            }
                        }
                    }
                }
                for (term, list) in terms {
                    try? term.withUnsafeBytes { term in
                        try list.withUnsafeBytes { try builder.add(term: term, list: $0, put: put) }
                    }
                }
                try? builder.flush(put: put)
                precondition(
                    again.map(\.term) == terms.map(\.term) && again.map(\.list) == terms.map(\.list), "block round trip"
                )
            }
        }
    }
    if let directory = try? SegmentDirectory(decoding: bytes) {
        let again = directory.encoded().withUnsafeBytes { try? SegmentDirectory(decoding: $0) }
        precondition(again == directory, "directory round trip changed it")
        // The merge policy never picks a range outside the segments.
        if let range = directory.nextMergeRange() {
            precondition(range.lowerBound >= 0 && range.upperBound <= directory.segments.count && range.count >= 2)
        }
    }
    if let document = try? IndexedDocument(decoding: bytes) {
        let again = document.encoded().withUnsafeBytes { try? IndexedDocument(decoding: $0) }
        precondition(again == document, "document entry round trip changed it")
    }
    return 0
}
