import LMDB
import Synchronization

/// The terms of the search index's segments, kept in memory for typo lookups: a segment gains
/// no term after the commit that wrote it (a merge only moves terms out of its inputs), so its
/// sorted terms, read once, serve every later query that reads that segment, and the walk for close terms runs over memory instead of
/// B-tree pages (binary searches instead of seeks). Shared by the readers of one store.
///
/// A segment is known by its generation's database and its directory entry (id, doc range,
/// postings): a rebuild that reuses an id writes another range or count, or the same content;
/// the output of a merge under way is listed with the postings written so far, so it is read
/// again as it grows. Terms a merge moves out of its inputs stay listed for them, so a cached
/// vocabulary may list more than a snapshot holds, never less. Only the terms are cached;
/// postings are always read from the snapshot, so a term the cache lists but a snapshot does
/// not hold is skipped. Entries of segments that a query no longer
/// sees among the live ones are dropped, so the cache holds about one vocabulary per segment.
final class SegmentTermCache: Sendable {
    struct Key: Hashable {
        var database: Database
        var segment: SegmentDirectory.Segment
    }

    private let entries = Mutex<[Key: SegmentTerms]>([:])
    /// The union of the live segments' terms, for the live segments it was made of.
    private let union = Mutex<(database: Database, segments: [SegmentDirectory.Segment], terms: SegmentTerms)?>(nil)

    init() {}

    /// The distinct terms of all `live` segments, sorted: made once per set of live segments
    /// (from each segment's cached terms), so a walk visits each term once, not once per
    /// segment that holds it.
    func vocabulary(
        of live: [SegmentDirectory.Segment], in database: Database,
        load: (SegmentDirectory.Segment) throws -> SegmentTerms
    ) rethrows -> SegmentTerms {
        if let cached = union.withLock({ $0 }), cached.database == database, cached.segments == live {
            return cached.terms
        }
        let parts = try live.map { segment in try terms(of: segment, in: database) { try load(segment) } }
        let merged = SegmentTerms.union(parts)
        union.withLock { $0 = (database, live, merged) }
        keep(only: live, in: database)
        return merged
    }

    /// The terms of `segment`, read with `load` when not cached.
    func terms(of segment: SegmentDirectory.Segment, in database: Database, load: () throws -> SegmentTerms) rethrows
        -> SegmentTerms
    {
        let key = Key(database: database, segment: segment)
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let loaded = try load()
        entries.withLock { $0[key] = loaded }
        return loaded
    }

    /// Drops the entries of `database` whose segments are not among `live`.
    func keep(only live: [SegmentDirectory.Segment], in database: Database) {
        let kept = Set(live)
        entries.withLock { entries in
            entries = entries.filter { $0.key.database != database || kept.contains($0.key.segment) }
        }
    }
}

/// One segment's keys after the segment id (`collection NUL term`, tags included), sorted, in
/// one arena.
final class SegmentTerms: Sendable {
    let arena: [UInt8]
    /// Key `k` is `arena[starts[k]..<starts[k + 1]]`.
    let starts: [Int]

    var count: Int { starts.count - 1 }

    init(arena: [UInt8], starts: [Int]) {
        self.arena = arena
        self.starts = starts
    }

    /// The distinct keys of `parts`, sorted.
    static func union(_ parts: [SegmentTerms]) -> SegmentTerms {
        if parts.count == 1 { return parts[0] }
        var keys: [(part: Int, index: Int)] = []
        keys.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for (part, terms) in parts.enumerated() { for index in 0..<terms.count { keys.append((part, index)) } }
        func bytes(_ key: (part: Int, index: Int)) -> ArraySlice<UInt8> {
            let terms = parts[key.part]
            return terms.arena[terms.starts[key.index]..<terms.starts[key.index + 1]]
        }
        keys.sort { bytes($0).lexicographicallyPrecedes(bytes($1)) }
        var arena: [UInt8] = []
        var starts = [0]
        var previous: ArraySlice<UInt8>?
        for key in keys {
            let term = bytes(key)
            if let previous, previous.elementsEqual(term) { continue }
            arena.append(contentsOf: term)
            starts.append(arena.count)
            previous = term
        }
        return SegmentTerms(arena: arena, starts: starts)
    }

    /// Reads the keys of segment `id` from `search_segments`.
    static func load(_ id: UInt32, tx: ReadTransaction, database: Database) throws -> SegmentTerms {
        var arena: [UInt8] = []
        var starts = [0]
        let prefix = IndexKeys.segment(id)
        try tx.withCursor(on: database) { cursor in
            var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry, current.key.starts(with: prefix) {
                arena.append(contentsOf: current.key[(current.key.startIndex + prefix.count)...])
                starts.append(arena.count)
                entry = try cursor.next()
            }
        }
        return SegmentTerms(arena: arena, starts: starts)
    }

    /// The first key at or after `low` that is not less than `bound`.
    func lowerBound(_ bound: [UInt8], from low: Int) -> Int {
        arena.withUnsafeBytes { arena in
            bound.withUnsafeBytes { bound in
                var low = low
                var high = count
                while low < high {
                    let middle = (low + high) / 2
                    let key = UnsafeRawBufferPointer(rebasing: arena[starts[middle]..<starts[middle + 1]])
                    if compareBytes(key, bound) < 0 { low = middle + 1 } else { high = middle }
                }
                return low
            }
        }
    }

    /// Calls `body` with each key of `collection` (a ``Keys/collectionPrefix(_:)``) that is a
    /// word, not a tag, and the part after the prefix; `body` returns how many bytes of the
    /// word no later word may begin with (`nil`: go on with the next key).
    func forEachWord(
        of collection: [UInt8], _ body: (_ word: UnsafeRawBufferPointer) -> Int?
    ) {
        var index = lowerBound(collection + [IndexKeys.tagMarker + 1], from: 0)
        let end = IndexKey.successor(of: collection).map { lowerBound($0, from: index) } ?? count
        while index < end {
            let skip = arena.withUnsafeBytes { arena in
                body(UnsafeRawBufferPointer(rebasing: arena[starts[index] + collection.count..<starts[index + 1]]))
            }
            guard let skip else {
                index += 1
                continue
            }
            let dead = Array(arena[starts[index] + collection.count..<starts[index] + collection.count + skip])
            guard let next = IndexKey.successor(of: dead) else { return }
            index = lowerBound(collection + next, from: index + 1)
        }
    }
}
