import LMDB
import Synchronization

/// The terms of the search index's segments, kept in memory for typo lookups: a segment's terms
/// change only while a merge moves terms into or out of it, so its sorted terms, read once, serve
/// every later query that reads that segment, and the walk for close terms runs over memory
/// instead of B-tree pages (binary searches instead of seeks). Shared by the readers of one store.
///
/// A segment is known by its generation's database, its directory entry and, while a merge
/// moves terms into or out of it, the last term moved (``Part``): that is what its terms depend
/// on, so snapshots of any age, in any process, never share a wrong entry. Segment ids are not
/// reused in a database (a rebuild numbers its segments after the other generation's). Only the
/// terms are cached; postings are always read from the snapshot. Entries of segments that a
/// query no longer sees are dropped, so the cache holds about one vocabulary per segment.
final class SegmentTermCache: Sendable {
    /// What determines a segment's terms in a snapshot: its directory entry and, while a merge
    /// moves terms into or out of it, the last term moved (its inputs hold the terms after it,
    /// its output the live ones up to it).
    struct Part: Hashable {
        var segment: SegmentDirectory.Segment
        var movedThrough: [UInt8]?
    }

    struct Key: Hashable {
        var database: Database
        var part: Part
    }

    private let entries = Mutex<[Key: SegmentTerms]>([:])
    /// The union of the live segments' terms, for the parts it was made of.
    private let union = Mutex<(database: Database, parts: [Part], terms: SegmentTerms)?>(nil)

    init() {}

    /// The distinct terms of all `live` segments, sorted: made once per set of live segments
    /// (from each segment's cached terms), so a walk visits each term once, not once per
    /// segment that holds it.
    func vocabulary(of live: [Part], in database: Database, load: (Part) throws -> SegmentTerms) rethrows
        -> SegmentTerms
    {
        if let cached = union.withLock({ $0 }), cached.database == database, cached.parts == live {
            return cached.terms
        }
        let parts = try live.map { part in try terms(of: part, in: database) { try load(part) } }
        let merged = SegmentTerms.union(parts)
        union.withLock { $0 = (database, live, merged) }
        keep(only: live, in: database)
        return merged
    }

    /// The terms of `part`, read with `load` when not cached.
    func terms(of part: Part, in database: Database, load: () throws -> SegmentTerms) rethrows -> SegmentTerms {
        let key = Key(database: database, part: part)
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let loaded = try load()
        entries.withLock { $0[key] = loaded }
        return loaded
    }

    /// Drops the entries of `database` that are not among `live`.
    func keep(only live: [Part], in database: Database) {
        let kept = Set(live)
        entries.withLock { entries in
            entries = entries.filter { $0.key.database != database || kept.contains($0.key.part) }
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

    /// Reads the terms of segment `id` from `search_segments`.
    static func load(_ id: UInt32, tx: ReadTransaction, database: Database) throws -> SegmentTerms {
        var arena: [UInt8] = []
        var starts = [0]
        let prefix = IndexKeys.segment(id)
        try tx.withCursor(on: database) { cursor in
            var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry, current.key.starts(with: prefix) {
                let first = SegmentEntry.firstTerm(of: current.key, segment: prefix)
                try SegmentEntry.forEachTerm(first: first, value: current.value) { term, _ in
                    arena.append(contentsOf: term)
                    starts.append(arena.count)
                    return true
                }
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
