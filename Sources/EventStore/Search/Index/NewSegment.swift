import LMDB

/// A transaction's new segment, encoded in memory: its ``SegmentEntry`` blocks in key order and
/// the number of postings they hold.
///
/// Encoding reads only the documents and the transaction's ``TermTable`` and ``PositionCollector``,
/// so it runs on the tokenizer thread (``DocumentTokenizer``) while the writer runs the commit's
/// merge work; the writer then puts the blocks under the segment's id.
struct NewSegment: Sendable {
    /// A live new document of the segment.
    struct Document: Sendable {
        var docID: UInt32
        var collection: String
        var document: SearchIndexWriter.Document
    }

    /// The blocks in key order, keyed under segment 0 (see ``write(as:tx:database:)``).
    private(set) var entries: [(key: [UInt8], value: [UInt8])] = []
    /// The number of postings the blocks hold.
    private(set) var postings = 0

    /// A posting on its way into a segment, with what it is sorted by.
    private struct SegmentPosting {
        var docID: UInt32
        var frequency: UInt32
        var length: UInt32
        /// Its positions in ``PositionCollector/arena``.
        var positions: Range<Int>
        var term: UInt32
        var collection: Int32
    }

    /// Encodes the postings of `documents` (in doc-id order): per collection, per term (a tag as
    /// `0x01 tag`) in key order, the postings in doc-id order, the lists of adjacent terms packed
    /// into ``SegmentEntry`` blocks.
    ///
    /// The postings are put in order by two stable counting sorts (by term rank, then by
    /// collection), which keeps each list in doc-id order without comparing any bytes but the
    /// distinct terms'.
    init(documents: [Document], terms: TermTable, positions: PositionCollector) {
        let ranks = terms.ranks()
        let collections = Set(documents.map(\.collection)).sorted(by: utf8Less)
        let collectionNumbers = Dictionary(uniqueKeysWithValues: collections.enumerated().map { ($1, Int32($0)) })
        var offsets = [Int](repeating: 0, count: terms.count + 1)
        for entry in documents {
            for term in entry.document.terms { offsets[Int(ranks[Int(term.number)]) + 1] += 1 }
            for tag in entry.document.tags { offsets[Int(ranks[Int(tag)]) + 1] += 1 }
        }
        for rank in 0..<terms.count { offsets[rank + 1] += offsets[rank] }
        let total = offsets[terms.count]
        let empty = SegmentPosting(docID: 0, frequency: 0, length: 0, positions: 0..<0, term: 0, collection: 0)
        var byTerm = [SegmentPosting](repeating: empty, count: total)
        for entry in documents {
            let collection = collectionNumbers[entry.collection]!
            func place(_ term: UInt32, _ posting: SegmentPosting) {
                let rank = Int(ranks[Int(term)])
                byTerm[offsets[rank]] = posting
                offsets[rank] += 1
            }
            for term in entry.document.terms {
                place(
                    term.number,
                    SegmentPosting(
                        docID: entry.docID, frequency: term.frequency, length: entry.document.length,
                        positions: term.positions, term: term.number, collection: collection))
            }
            for tag in entry.document.tags {
                place(
                    tag,
                    SegmentPosting(
                        docID: entry.docID, frequency: 0, length: 0, positions: 0..<0, term: tag,
                        collection: collection
                    ))
            }
        }
        var sorted = byTerm
        if collections.count > 1 {
            var starts = [Int](repeating: 0, count: collections.count + 1)
            for entry in byTerm { starts[Int(entry.collection) + 1] += 1 }
            for index in 0..<collections.count { starts[index + 1] += starts[index] }
            for entry in byTerm {
                sorted[starts[Int(entry.collection)]] = entry
                starts[Int(entry.collection)] += 1
            }
        }

        let prefixes = collections.map { Keys.collectionPrefix($0) }
        var writer = ByteWriter(capacity: 256)
        var builder = PostingList.Builder(positions: true)
        // Keyed under segment 0 here; ``write(as:tx:database:)`` puts each key under the segment's id.
        var blocks = SegmentEntry.Builder(segment: 0)
        var entries: [(key: [UInt8], value: [UInt8])] = []
        let put = { (key: [UInt8], value: [UInt8]) in entries.append((key, value)) }
        var key: [UInt8] = []
        var runStart = 0
        positions.arena.bytes.withUnsafeBytes { arena in
            while runStart < sorted.count {
                let term = sorted[runStart].term
                let collection = sorted[runStart].collection
                var runEnd = runStart + 1
                while runEnd < sorted.count && sorted[runEnd].term == term && sorted[runEnd].collection == collection {
                    runEnd += 1
                }
                key.removeAll(keepingCapacity: true)
                key.append(contentsOf: prefixes[Int(collection)])
                let tag = terms.withBytes(of: term) { bytes in
                    key.append(contentsOf: bytes)
                    return bytes.first == IndexKeys.tagMarker
                }
                // Words carry their positions; tags have none.
                builder.removeAll(positions: !tag)
                for entry in sorted[runStart..<runEnd] {
                    builder.append(
                        Posting(
                            docID: entry.docID, frequency: entry.frequency, length: entry.length,
                            positions: UnsafeRawBufferPointer(rebasing: arena[entry.positions])))
                }
                writer.bytes.removeAll(keepingCapacity: true)
                builder.encode(into: &writer)
                key.withUnsafeBytes { key in
                    writer.bytes.withUnsafeBytes { blocks.add(term: key, list: $0, put: put) }
                }
                runStart = runEnd
            }
        }
        blocks.flush(put: put)
        self.entries = entries
        self.postings = sorted.count
    }

    /// Appends the blocks to `database` as segment `segment`, whose keys sort after every key
    /// there.
    func write(as segment: UInt32, tx: WriteTransaction, database: Database) throws {
        var key = IndexKeys.segment(segment)
        for entry in entries {
            key.removeSubrange(4...)
            key.append(contentsOf: entry.key[4...])
            try tx.put(entry.value, forKey: key, in: database, options: .append)
        }
    }
}
