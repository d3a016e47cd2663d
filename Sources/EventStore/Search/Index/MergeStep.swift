import LMDB

/// One step of a merge, computed but not yet written: the output's entries for the inputs'
/// terms after ``SegmentDirectory/Merge/resumeAfter``, up to a work budget, with the dead
/// documents' postings dropped.
///
/// Computing a step only reads (the inputs' terms and the dead-document bitmap), so it runs in
/// the write transaction that applies it, or ahead of it on another thread, from a snapshot
/// (``MergeAhead``). The snapshot's result is as valid in the later transaction as long as the
/// merge has not moved since: a merge's inputs change only by its own steps, and a document
/// that died after the snapshot is skipped by queries (its postings are dropped by a later
/// merge). ``SegmentMerger`` applies a step: it writes the entries, deletes the moved terms
/// from the inputs, and completes the merge when the step reached the inputs' end.
struct MergeStep: Sendable {
    /// The merge as it was before the step: it applies only to a merge in exactly this state.
    let merge: SegmentDirectory.Merge
    /// The generation whose index it reads.
    let databases: ProjectionDatabases
    /// The output's new entries (``SegmentEntry``), in key order: ranges of ``bytes``. Kept in
    /// one buffer, so that a step computed on another thread is a few allocations, not one per
    /// entry, whichever thread frees it.
    private(set) var entries: [(key: Range<Int>, value: Range<Int>)] = []
    private(set) var bytes: [UInt8] = []
    /// The last term the step moved: the merge resumes after it. `nil` when it moved none.
    private(set) var through: [UInt8]?
    /// Postings written into the output.
    private(set) var written: UInt64 = 0
    /// Whether no input term is left after ``through``: applying the step completes the merge.
    private(set) var completes = false
    /// The work done, in the merger's units: a posting copied, a term deleted from an input.
    private(set) var work = 0

    /// The most work one step does, so that a step's entries stay a few MiB in memory.
    static let maximumWork = 1 << 18

    /// Whether this step is the next one of `merge` in `databases`: computed from exactly that
    /// state of the merge (token, inputs, progress) in that generation.
    func applies(to merge: SegmentDirectory.Merge, in databases: ProjectionDatabases) -> Bool {
        self.merge == merge && self.databases === databases
    }

    /// Calls `body` with each entry's key and value, in key order.
    func forEachEntry(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) rethrows
    {
        try bytes.withUnsafeBytes { bytes in
            for (key, value) in entries {
                try body(UnsafeRawBufferPointer(rebasing: bytes[key]), UnsafeRawBufferPointer(rebasing: bytes[value]))
            }
        }
    }

    /// Computes the step of `merge` that does about `budget` units of work (see
    /// ``SegmentMerger``): it ends after the term that spends the budget.
    init(_ merge: SegmentDirectory.Merge, budget: Int, tx: ReadTransaction, databases: ProjectionDatabases) throws {
        self.merge = merge
        self.databases = databases
        let budget = min(budget, MergeStep.maximumWork)
        var walk = try TermWalk(
            tx: tx, database: databases.searchSegments, segments: merge.inputs, after: merge.resumeAfter)
        var dead = DeadDocuments.Reader(tx: tx, database: databases.state)
        var merged = PostingList.Builder(positions: false)
        var writer = ByteWriter(capacity: 256)
        var output = SegmentEntry.Builder(segment: merge.output)
        var entries: [(key: Range<Int>, value: Range<Int>)] = []
        var bytes: [UInt8] = []
        let put = { (key: [UInt8], value: [UInt8]) in
            let start = bytes.count
            bytes.append(contentsOf: key)
            bytes.append(contentsOf: value)
            entries.append((start..<start + key.count, start + key.count..<bytes.count))
        }
        while work < budget, let (term, lists) = try walk.next() {
            // The output keeps positions when its inputs have them (words do, tags do not).
            let positions = try lists.contains {
                try $0.list.withUnsafeBytes { try PostingList.Decoder($0).hasPositions }
            }
            merged.removeAll(positions: positions)
            for (_, list) in lists {
                work += try list.withUnsafeBytes { list in
                    try merged.append(liveOf: list) { try !dead.isDead($0) }
                }
            }
            if merged.count > 0 {
                writer.bytes.removeAll(keepingCapacity: true)
                merged.encode(into: &writer)
                term.withUnsafeBytes { term in
                    writer.bytes.withUnsafeBytes { output.add(term: term, list: $0, put: put) }
                }
                written += UInt64(merged.count)
            }
            // Moved: the term leaves the inputs in the commit that writes it into the output.
            if merge.movesTerms { work += lists.count }
            through = term
        }
        output.flush(put: put)
        self.entries = entries
        self.bytes = bytes
        completes = walk.isAtEnd
    }
}
