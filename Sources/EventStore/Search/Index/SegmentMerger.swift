import LMDB

/// Merges segments and cleans up after merges, a bounded amount of work per commit.
///
/// A merge moves its inputs into a new segment term by term, in key order, dropping the
/// postings of dead documents: each term is written into the output and deleted from the inputs
/// in the same commit, so queries read the inputs and the partial output together (see
/// ``SegmentDirectory/readableSegments``) and the index never holds a posting twice. It stops
/// when the commit's budget is spent and resumes after the last term moved in a later commit.
/// In the commit that moves the last term, the output replaces the inputs in the directory;
/// purging the dead entries of `search_documents` in the merged range follows, also under the
/// budget. Every step is part of a write transaction, so a crash leaves the state of the last
/// commit.
///
/// One unit of work is a posting copied, a key deleted or a document entry checked. A term is
/// never split, so a commit can overrun its budget by one term's postings.
///
/// A step is computed (``MergeStep``), then applied. In the store's commits the steps are
/// computed ahead, between commits, on another thread (``MergeAhead``): the commit only writes
/// them.
struct SegmentMerger {
    let tx: WriteTransaction
    let databases: ProjectionDatabases

    /// Spends `budget` units on clean-up and merges.
    ///
    /// With `ahead`, the merges' steps are the ones it computed on its thread: when the step for
    /// the merge under way is not ready, the merge waits and the unspent budget is returned, to
    /// be spent by a later commit. The writer computes a step itself when none came for
    /// ``MergeAhead/patience`` commits, and while the segments number more than twice
    /// ``SegmentDirectory/maxSegments`` (the helper fell behind), so queries never read more
    /// segments than that.
    ///
    /// - Returns: The budget left unspent (0 without `ahead`).
    func run(budget: Int, directory: inout SegmentDirectory, ahead: MergeAhead? = nil) throws -> Int {
        var budget = budget
        while budget > 0 {
            if let work = directory.cleanup.first {
                if let remaining = try clean(work, budget: &budget) {
                    directory.cleanup[0] = remaining
                } else {
                    directory.cleanup.removeFirst()
                }
                continue
            }
            let merge: SegmentDirectory.Merge
            if let current = directory.merge {
                merge = current
            } else {
                guard let range = try directory.nextMergeRange() ?? expungeRange(directory) else { return 0 }
                merge = SegmentDirectory.Merge(
                    inputs: directory.segments[range].map(\.id), output: try directory.allocateSegmentID(),
                    resumeAfter: nil, written: 0, token: ahead == nil ? 0 : UInt64.random(in: 1...UInt64.max))
                directory.merge = merge
            }
            var decision = MergeAhead.Decision.compute
            if let ahead, merge.token != 0, directory.segments.count <= 2 * SegmentDirectory.maxSegments {
                decision = ahead.decide(for: merge, databases: databases)
            }
            let step: MergeStep
            switch decision {
            case .apply(let ready): step = ready
            case .wait: return budget
            case .compute: step = try MergeStep(merge, budget: budget, tx: tx, databases: databases)
            }
            try apply(step, to: &directory)
            budget -= max(1, step.work)
        }
        return 0
    }

    /// A segment to rewrite alone, dropping its dead postings (as Lucene expunges deletes): of
    /// the segments of at least ``SegmentDirectory/expungeMinimumPostings``, the one where the
    /// most documents died since it was written, when they are half or more of the live
    /// documents it was written with. Without it, replaced versions would stay in the large
    /// segments that tiered merging seldom reaches.
    private func expungeRange(_ directory: SegmentDirectory) throws -> Range<Int>? {
        var dead = DeadDocuments.Reader(tx: tx, database: databases.state)
        var best: (index: Int, died: Int)?
        for (index, segment) in directory.segments.enumerated()
        where segment.postings >= SegmentDirectory.expungeMinimumPostings {
            let span = Int(segment.lastDoc - segment.firstDoc) + 1
            let died = try dead.deadCount(in: segment.firstDoc...segment.lastDoc) - Int(segment.dropped)
            let written = span - Int(segment.dropped)
            if died * 2 >= written && died > (best?.died ?? 0) { best = (index, died) }
        }
        return best.map { $0.index..<$0.index + 1 }
    }

    /// Writes a step of the merge under way (which must be the merge it was computed for):
    /// its entries into the output, then the moved terms out of the inputs; when it reached
    /// the inputs' end, the output takes the inputs' place.
    private func apply(_ step: MergeStep, to directory: inout SegmentDirectory) throws {
        guard var merge = directory.merge, step.applies(to: merge, in: databases) else {
            throw EventStoreError(.corrupt, "search index: a merge step applied to another merge")
        }
        try step.forEachEntry { key, value in _ = try tx.put(value, forKey: key, in: databases.searchSegments) }
        merge.written += step.written
        if let through = step.through {
            merge.resumeAfter = through
            // The step's terms are all in the output before the inputs lose them.
            if merge.movesTerms { try deleteMoved(through: through, from: merge.inputs) }
        }
        guard step.completes else {
            directory.merge = merge
            return
        }
        // Complete: the output takes the inputs' place.
        guard let first = directory.segments.firstIndex(where: { $0.id == merge.inputs[0] }),
            directory.segments.count >= first + merge.inputs.count,
            directory.segments[first..<first + merge.inputs.count].map(\.id) == merge.inputs
        else { throw EventStoreError(.corrupt, "search index: the merge's inputs are not adjacent live segments") }
        let range = first..<first + merge.inputs.count
        let firstDoc = directory.segments[range.lowerBound].firstDoc
        let lastDoc = directory.segments[range.upperBound - 1].lastDoc
        // Documents that died while the merge ran may still have postings in the output: they
        // count as dropped, so a later expunge waits for more deaths than it might have.
        var dead = DeadDocuments.Reader(tx: tx, database: databases.state)
        let output = SegmentDirectory.Segment(
            id: merge.output, firstDoc: firstDoc, lastDoc: lastDoc, postings: merge.written,
            dropped: UInt32(try dead.deadCount(in: firstDoc...lastDoc)))
        directory.segments.replaceSubrange(range, with: merge.written > 0 ? [output] : [])
        directory.cleanup.append(contentsOf: merge.inputs.map { .segment($0) })
        directory.cleanup.append(.documents(from: firstDoc, through: lastDoc))
        directory.merge = nil
    }

    /// Deletes each input's terms up to `through`: the terms this step moved, as the earlier
    /// steps deleted the ones before them. An input's entries that start at or before
    /// `through` are deleted as one run of keys; only the last of them can also hold later
    /// terms (each entry's terms come before the next entry's first), so only that one is read:
    /// when it does, it is written again with only those, under the first of them, so an
    /// input's entries always start after the last term moved.
    private func deleteMoved(through: [UInt8], from inputs: [UInt32]) throws {
        try tx.withWriteCursor(on: databases.searchSegments) { cursor in
            for input in inputs {
                let prefix = IndexKeys.segment(input)
                // The least key after the input's key for `through`: every entry before it that
                // has the input's prefix starts at or before `through`.
                var bound = prefix + through
                bound.append(0)
                let after = try cursor.seek(atLeast: bound)
                guard let last = try after == nil ? cursor.last() : cursor.previous(), last.key.starts(with: prefix)
                else { continue }
                // Read before anything is deleted: the bytes live on a page a delete may change.
                let lastKey = Array(last.key)
                var rest: [(term: [UInt8], list: [UInt8])] = []
                try through.withUnsafeBytes { through in
                    try SegmentEntry.forEachTerm(
                        first: SegmentEntry.firstTerm(of: last.key, segment: prefix), value: last.value
                    ) { term, list in
                        if compareBytes(term, through) > 0 { rest.append((Array(term), Array(list))) }
                        return true
                    }
                }
                let first = try cursor.seek(atLeast: prefix)
                _ = try lastKey.withUnsafeBytes { lastKey in
                    try cursor.deleteRun(from: first) { compareBytes($0.key, lastKey) < 0 }
                }
                // The cursor stands on the last entry.
                try cursor.deleteCurrent()
                guard !rest.isEmpty else { continue }
                var entries = SegmentEntry.Builder(segment: input)
                let put = { (key: [UInt8], value: [UInt8]) in
                    try key.withUnsafeBytes { key in
                        try value.withUnsafeBytes { _ = try cursor.put($0, forKey: key) }
                    }
                }
                for (term, list) in rest {
                    try term.withUnsafeBytes { term in
                        try list.withUnsafeBytes { try entries.add(term: term, list: $0, put: put) }
                    }
                }
                try entries.flush(put: put)
            }
        }
    }

    /// Does part of one clean-up; returns what is left of it, or `nil` when it is done.
    private func clean(_ work: SegmentDirectory.Cleanup, budget: inout Int) throws -> SegmentDirectory.Cleanup? {
        switch work {
        case .segment(let id):
            let prefix = IndexKeys.segment(id)
            return try tx.withWriteCursor(on: databases.searchSegments) { cursor in
                let first = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                try cursor.deleteRun(from: first) { entry in
                    guard budget > 0, entry.key.starts(with: prefix) else { return false }
                    budget -= 1 + entry.value.count / 32
                    return true
                }
                // Stopped with budget left: the segment has no keys any more.
                return budget > 0 ? nil : work
            }
        case .documents(let from, let through):
            var dead = DeadDocuments.Reader(tx: tx, database: databases.state)
            var next = UInt64(from)
            // One walk from `from`: the cursor steps to each next entry (a delete leaves it on
            // the one that followed), without searching the tree for each document.
            try tx.withWriteCursor(on: databases.searchDocuments) { cursor in
                var entry = try IndexKeys.document(from).withUnsafeBytes { try cursor.seek(atLeast: $0) }
                while budget > 0 && next <= UInt64(through) {
                    guard let current = entry, case let docID = try IndexKeys.docID(of: current.key), docID <= through
                    else {
                        next = UInt64(through) + 1
                        break
                    }
                    budget -= 1
                    if try dead.isDead(docID) { try cursor.deleteCurrent() }
                    next = UInt64(docID) + 1
                    entry = try cursor.next()
                }
            }
            return next > UInt64(through) ? nil : .documents(from: UInt32(next), through: through)
        }
    }
}
