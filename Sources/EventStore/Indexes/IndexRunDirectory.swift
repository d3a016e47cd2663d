import LMDB

/// The declared indexes' table of contents, one value in the generation's `state` database
/// (`index.runs`): the live runs of `g<N>.indexes`, oldest first, and the next run id.
///
/// A run is one sorted batch of index entries: a commit's changes, or the merge of older runs.
/// The same entry key may sit in several runs; the newest run that holds it decides whether it
/// is live (an empty value) or deleted (a tombstone). See ``IndexRuns``.
///
/// ```
/// u8      format (1)
/// varint  next run id
/// varint  run count, then per run (oldest first): varint id, varint entries (tombstones included)
/// u8      1 when a merge is under way, then: varint input count, varint input ids (adjacent
///         runs, oldest first), varint output id, varint entries written, varint length and
///         bytes of the last entry key written (length 0: none yet)
/// ```
struct IndexRunDirectory: Equatable {
    /// A live run.
    struct Run: Equatable {
        var id: UInt32
        /// Its entries, tombstones included: its size for the merge policy.
        var entries: UInt64
    }

    /// A merge too large for one commit, spread over the following ones: `inputs` (adjacent
    /// live runs) are copied, in key order, into run `output`, which no query reads until the
    /// last key is copied; then the output takes the inputs' place and they are deleted.
    struct Merge: Equatable {
        var inputs: [UInt32]
        var output: UInt32
        var written: UInt64 = 0
        /// The last entry key copied (`nil`: none yet).
        var resumeAfter: [UInt8]?
    }

    var nextRun: UInt32 = 1
    /// Oldest first: a later run's entry overrides an earlier one's with the same key.
    var runs: [Run] = []
    var merge: Merge?

    static let key = Array("index.runs".utf8)
    static let formatVersion: UInt8 = 1

    /// Runs merged at once, when that many of one size tier sit side by side.
    static let fanIn = 8
    /// Above this many runs, the adjacent `fanIn` runs with the fewest entries are merged whatever
    /// their tiers (commits of very different sizes interleaved never fill a tier).
    static let maxRuns = 24

    /// Takes the next run id.
    mutating func newRun() -> UInt32 {
        defer { nextRun += 1 }
        return nextRun
    }

    /// The size tier of a run: runs of one tier differ in size by less than a factor of `fanIn`.
    static func tier(_ entries: UInt64) -> Int {
        var tier = 0
        var bound = UInt64(fanIn)
        while entries >= bound && tier < 20 {
            tier += 1
            bound &*= UInt64(fanIn)
        }
        return tier
    }

    /// The runs to merge next (adjacent, oldest first), or `nil` when none need merging: the
    /// newest `fanIn` adjacent runs of one tier, or, above ``maxRuns``, the cheapest window.
    /// Runs that a merge under way reads are left out.
    func nextMerge() -> Range<Int>? {
        let fanIn = IndexRunDirectory.fanIn
        let busy = Set(merge?.inputs ?? [])
        let free = runs.indices.filter { !busy.contains(runs[$0].id) }
        guard free.count >= fanIn else { return nil }
        // Windows of adjacent runs none of which is busy.
        func isFree(_ window: Range<Int>) -> Bool { !runs[window].contains { busy.contains($0.id) } }
        let tiers = runs.map { IndexRunDirectory.tier($0.entries) }
        for end in stride(from: runs.count, through: fanIn, by: -1) {
            let window = (end - fanIn)..<end
            if isFree(window), tiers[window].allSatisfy({ $0 == tiers[window.lowerBound] }) { return window }
        }
        guard free.count > IndexRunDirectory.maxRuns else { return nil }
        var best: Range<Int>?
        var bestSize = UInt64.max
        for start in 0...(runs.count - fanIn) where isFree(start..<(start + fanIn)) {
            let size = runs[start..<(start + fanIn)].reduce(UInt64(0)) { $0 &+ $1.entries }
            if size < bestSize {
                bestSize = size
                best = start..<(start + fanIn)
            }
        }
        return best
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8 + runs.count * 8)
        writer.write(IndexRunDirectory.formatVersion)
        writer.write(varint: UInt64(nextRun))
        writer.write(varint: runs.count)
        for run in runs {
            writer.write(varint: UInt64(run.id))
            writer.write(varint: run.entries)
        }
        if let merge {
            writer.write(UInt8(1))
            writer.write(varint: merge.inputs.count)
            for id in merge.inputs { writer.write(varint: UInt64(id)) }
            writer.write(varint: UInt64(merge.output))
            writer.write(varint: merge.written)
            writer.write(varint: merge.resumeAfter?.count ?? 0)
            writer.write(raw: merge.resumeAfter ?? [])
        } else {
            writer.write(UInt8(0))
        }
        return writer.bytes
    }

    init() {}

    /// Decodes a directory; throws ``EventStoreError/Code/corrupt`` for bytes no directory
    /// encodes (an unknown format, a run id at or above the next one, a repeated id).
    init(decoding buffer: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(buffer)
        guard try reader.readByte() == IndexRunDirectory.formatVersion else {
            throw ByteReader.corrupt("index run directory (format)")
        }
        let next = try reader.readVarint()
        guard next <= UInt64(UInt32.max) else { throw ByteReader.corrupt("index run directory (next run)") }
        nextRun = UInt32(next)
        let count = try reader.readCount(minimumBytesEach: 2)
        var seen = Set<UInt32>()
        runs.reserveCapacity(count)
        for _ in 0..<count {
            let id = try reader.readVarint()
            guard id < next, seen.insert(UInt32(id)).inserted else {
                throw ByteReader.corrupt("index run directory (run id)")
            }
            runs.append(Run(id: UInt32(id), entries: try reader.readVarint()))
        }
        switch try reader.readByte() {
        case 0: break
        case 1:
            let inputCount = try reader.readCount(minimumBytesEach: 1)
            var inputs: [UInt32] = []
            for _ in 0..<inputCount {
                let id = try reader.readVarint()
                guard id < next else { throw ByteReader.corrupt("index run directory (merge input)") }
                inputs.append(UInt32(id))
            }
            // The inputs are adjacent live runs, in order.
            guard let first = runs.firstIndex(where: { $0.id == inputs.first }),
                first + inputs.count <= runs.count, runs[first..<(first + inputs.count)].map(\.id) == inputs
            else { throw ByteReader.corrupt("index run directory (merge inputs)") }
            let output = try reader.readVarint()
            guard output < next, !seen.contains(UInt32(output)) else {
                throw ByteReader.corrupt("index run directory (merge output)")
            }
            let written = try reader.readVarint()
            let length = try reader.readCount(minimumBytesEach: 1)
            let resume = length == 0 ? nil : Array(try reader.readBytes(length))
            merge = Merge(inputs: inputs, output: UInt32(output), written: written, resumeAfter: resume)
        default: throw ByteReader.corrupt("index run directory (merge flag)")
        }
        guard reader.isAtEnd else { throw ByteReader.corrupt("index run directory (trailing bytes)") }
    }

    static func load(tx: ReadTransaction, state: Database) throws -> IndexRunDirectory {
        try key.withUnsafeBytes { key in
            try tx.value(forKey: key, in: state).map { try IndexRunDirectory(decoding: $0) }
        } ?? IndexRunDirectory()
    }

    /// Stores the directory, or removes it when no run is left.
    func save(tx: WriteTransaction, state: Database) throws {
        if runs.isEmpty && nextRun == 1 && merge == nil {
            _ = try tx.delete(IndexRunDirectory.key, in: state)
        } else {
            try tx.put(encoded(), forKey: IndexRunDirectory.key, in: state)
        }
    }
}
