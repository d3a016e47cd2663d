import LMDB

/// The search index's table of contents, one value in the generation's `state` database
/// (`search.index`): the live segments in doc-id order, the merge in progress, the clean-up
/// still to do, the next doc and segment ids, and the merge work earned but not spent.
///
/// Segments cover disjoint, increasing doc-id ranges: a commit's new segment holds doc ids
/// above every earlier one, and a merge replaces adjacent segments by one covering their range.
/// So walking the segments in order yields any term's postings in doc-id order.
struct SegmentDirectory: Equatable {
    /// A live segment.
    struct Segment: Hashable {
        var id: UInt32
        var firstDoc: UInt32
        var lastDoc: UInt32
        /// Postings written into it (dead ones included): its size for the merge policy.
        var postings: UInt64
        /// The dead documents of its range when it was written, whose postings it does not
        /// hold: those that died since are what an expunge would drop.
        var dropped: UInt32 = 0
    }

    /// A merge under way: `inputs` (adjacent live segments, in order) are moved term by term
    /// into segment `output`: each step writes a term's live postings into `output` and deletes
    /// the term from every input in the same commit, so each term is in the inputs or in the
    /// output, never in both, and queries read both (``readableSegments``). The index never
    /// holds a merge's postings twice.
    struct Merge: Equatable {
        var inputs: [UInt32]
        var output: UInt32
        /// The last term key copied; `nil` before the first.
        var resumeAfter: [UInt8]?
        /// Postings written into `output` so far.
        var written: UInt64
        /// Whether the merge moves terms (deletes them from the inputs as it copies them). A
        /// merge begun by directory format 2 copies them and leaves the inputs whole until it
        /// completes: queries ignore its output until then.
        var movesTerms = true
        /// Names this merge among all merges of every generation, so that a step prepared ahead
        /// from a snapshot (``MergeAhead``) is applied only to the merge it was prepared for; 0
        /// for a merge whose steps are all taken inside commits (a rebuild's, or one begun by
        /// directory format 3 or earlier).
        var token: UInt64 = 0
    }

    /// Work left after a merge: deleting an input segment's keys, purging dead entries of
    /// `search_documents` in a doc-id range.
    enum Cleanup: Equatable {
        case segment(UInt32)
        case documents(from: UInt32, through: UInt32)
    }

    var nextDoc: UInt32 = 1
    var nextSegment: UInt32 = 1
    /// Merge work earned by commits and not spent yet (see ``SearchIndexChanges``).
    var credit: UInt64 = 0
    var segments: [Segment] = []
    var merge: Merge?
    var cleanup: [Cleanup] = []

    static let key = Array("search.index".utf8)
    /// 4 adds the merge's ``Merge/token``; 3 adds whether the merge under way moves terms; 2
    /// adds each segment's dropped documents (1 is read as none dropped). Merges of formats 1
    /// and 2 copy terms.
    static let formatVersion: UInt8 = 4

    /// The segments a query reads, in doc-id order: the live ones and, while a merge moves
    /// terms, its output, in the place of its inputs (a term is in one or the other). The
    /// output's entry counts the postings written so far, so it changes as the merge goes on.
    var readableSegments: [Segment] {
        guard let merge, merge.movesTerms,
            let first = segments.firstIndex(where: { $0.id == merge.inputs[0] }),
            first + merge.inputs.count <= segments.count
        else { return segments }
        var readable = segments
        readable.insert(
            Segment(
                id: merge.output, firstDoc: segments[first].firstDoc,
                lastDoc: segments[first + merge.inputs.count - 1].lastDoc, postings: merge.written),
            at: first)
        return readable
    }

    /// Segments merged at once, when that many of one size tier sit side by side.
    static let fanIn = 8
    /// Above this many live segments, the smallest adjacent run is merged whatever its tiers.
    static let maxSegments = 24
    /// A segment of at least this many postings is rewritten alone (its dead postings dropped)
    /// when half or more of the live documents it was written with have died since.
    static let expungeMinimumPostings: UInt64 = 4_096

    /// A segment's size tier: postings below 512 are tier 0, then one tier per factor of 8.
    static func tier(_ postings: UInt64) -> Int {
        max(0, (63 - postings.leadingZeroBitCount) / 3 - 2)
    }

    /// The next merge the policy wants, as a range of ``segments`` indexes, or `nil`.
    ///
    /// The first run of ``fanIn`` adjacent segments of one tier (so each posting is copied about
    /// once per tier: the write cost of merging grows with the log of the index size); failing
    /// that, with more than ``maxSegments`` segments, the adjacent run of ``fanIn`` with the
    /// fewest postings (queries read every segment, so their number stays bounded).
    func nextMergeRange() -> Range<Int>? {
        guard merge == nil, segments.count >= 2 else { return nil }
        var start = 0
        while start < segments.count {
            let tier = SegmentDirectory.tier(segments[start].postings)
            var end = start + 1
            while end < segments.count && SegmentDirectory.tier(segments[end].postings) == tier { end += 1 }
            if end - start >= SegmentDirectory.fanIn { return start..<start + SegmentDirectory.fanIn }
            start = end
        }
        guard segments.count > SegmentDirectory.maxSegments else { return nil }
        var best = 0..<SegmentDirectory.fanIn
        var bestSize = UInt64.max
        for first in 0...(segments.count - SegmentDirectory.fanIn) {
            let size = segments[first..<first + SegmentDirectory.fanIn].reduce(0) { $0 + $1.postings }
            if size < bestSize {
                bestSize = size
                best = first..<first + SegmentDirectory.fanIn
            }
        }
        return best
    }

    mutating func allocateSegmentID() throws -> UInt32 {
        guard nextSegment < UInt32.max else {
            throw EventStoreError(.projection, "search index ran out of segment ids")
        }
        defer { nextSegment += 1 }
        return nextSegment
    }

    mutating func allocateDocID() throws -> UInt32 {
        guard nextDoc < UInt32.max else { throw EventStoreError(.projection, "search index ran out of document ids") }
        defer { nextDoc += 1 }
        return nextDoc
    }

    // MARK: Encoding

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 32 + segments.count * 12)
        writer.write(SegmentDirectory.formatVersion)
        writer.write(varint: UInt64(nextDoc))
        writer.write(varint: UInt64(nextSegment))
        writer.write(varint: credit)
        writer.write(varint: segments.count)
        for segment in segments {
            writer.write(varint: UInt64(segment.id))
            writer.write(varint: UInt64(segment.firstDoc))
            writer.write(varint: UInt64(segment.lastDoc))
            writer.write(varint: segment.postings)
            writer.write(varint: UInt64(segment.dropped))
        }
        if let merge {
            writer.write(UInt8(1))
            writer.write(varint: UInt64(merge.output))
            writer.write(varint: merge.inputs.count)
            for input in merge.inputs { writer.write(varint: UInt64(input)) }
            writer.write(varint: merge.written)
            writer.write(UInt8(merge.movesTerms ? 1 : 0))
            writer.write(varint: merge.token)
            if let resume = merge.resumeAfter {
                writer.write(UInt8(1))
                writer.write(varint: resume.count)
                writer.write(raw: resume)
            } else {
                writer.write(UInt8(0))
            }
        } else {
            writer.write(UInt8(0))
        }
        writer.write(varint: cleanup.count)
        for work in cleanup {
            switch work {
            case .segment(let id):
                writer.write(UInt8(1))
                writer.write(varint: UInt64(id))
            case .documents(let from, let through):
                writer.write(UInt8(2))
                writer.write(varint: UInt64(from))
                writer.write(varint: UInt64(through))
            }
        }
        return writer.bytes
    }

    init() {}

    init(decoding value: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(value)
        let format = try reader.readByte()
        guard (1...SegmentDirectory.formatVersion).contains(format) else {
            throw ByteReader.corrupt("search index directory")
        }
        func id(_ reader: inout ByteReader) throws -> UInt32 {
            let value = try reader.readVarint()
            guard value <= UInt64(UInt32.max) else { throw ByteReader.corrupt("search index directory") }
            return UInt32(value)
        }
        nextDoc = try id(&reader)
        nextSegment = try id(&reader)
        credit = try reader.readVarint()
        let count = try reader.readCount(minimumBytesEach: 4)
        for _ in 0..<count {
            let segment = Segment(
                id: try id(&reader), firstDoc: try id(&reader), lastDoc: try id(&reader),
                postings: try reader.readVarint(),
                dropped: format == 1 ? 0 : try id(&reader))
            guard segment.id < nextSegment, segment.firstDoc <= segment.lastDoc, segment.lastDoc < nextDoc,
                segments.last.map({ $0.lastDoc < segment.firstDoc }) ?? true
            else { throw ByteReader.corrupt("search index directory (segment ranges)") }
            segments.append(segment)
        }
        switch try reader.readByte() {
        case 0: merge = nil
        case 1:
            let output = try id(&reader)
            let inputCount = try reader.readCount()
            var inputs: [UInt32] = []
            for _ in 0..<inputCount { inputs.append(try id(&reader)) }
            let written = try reader.readVarint()
            var movesTerms = false
            if format >= 3 {
                switch try reader.readByte() {
                case 0: movesTerms = false
                case 1: movesTerms = true
                default: throw ByteReader.corrupt("search index directory (merge)")
                }
            }
            let token = format >= 4 ? try reader.readVarint() : 0
            var resume: [UInt8]?
            switch try reader.readByte() {
            case 0: resume = nil
            case 1: resume = Array(try reader.readBytes(try reader.readCount()))
            default: throw ByteReader.corrupt("search index directory (merge)")
            }
            let live = Set(segments.map(\.id))
            guard output < nextSegment, !live.contains(output), !inputs.isEmpty, inputs.allSatisfy(live.contains) else {
                throw ByteReader.corrupt("search index directory (merge)")
            }
            merge = Merge(
                inputs: inputs, output: output, resumeAfter: resume, written: written, movesTerms: movesTerms,
                token: token)
        default: throw ByteReader.corrupt("search index directory (merge)")
        }
        let cleanupCount = try reader.readCount(minimumBytesEach: 2)
        for _ in 0..<cleanupCount {
            switch try reader.readByte() {
            case 1: cleanup.append(.segment(try id(&reader)))
            case 2: cleanup.append(.documents(from: try id(&reader), through: try id(&reader)))
            default: throw ByteReader.corrupt("search index directory (clean-up)")
            }
        }
        guard reader.isAtEnd else { throw ByteReader.corrupt("search index directory (trailing bytes)") }
    }

    static func load(tx: ReadTransaction, state: Database) throws -> SegmentDirectory {
        try key.withUnsafeBytes { key in
            try tx.value(forKey: key, in: state).map { try SegmentDirectory(decoding: $0) }
        } ?? SegmentDirectory()
    }

    func save(tx: WriteTransaction, state: Database) throws {
        try tx.put(encoded(), forKey: SegmentDirectory.key, in: state)
    }
}
