/// An entry the engine keeps in the `meta` database or in a projection generation's `state`
/// database, decoded: the one description of those keys and encodings outside the engine, for
/// tools that show them (`evstore dump --meta`).
///
/// ```swift
/// for (key, value) in try store.read({ try $0.allMetadata() }) {
///     if let entry = try? StoredEntry(metaKey: key, value: value) { print(key, entry) }
/// }
/// ```
package enum StoredEntry: Sendable, Hashable {
    /// `store.format`: the store format version.
    case formatVersion(UInt64)
    /// `store.replica`: the replica id new events are written under.
    case replicaID(ReplicaID)
    /// `store.hlc`: the hybrid logical clock's high-water mark.
    case clock(HLCTimestamp)
    /// `store.origin-seq`: the last origin sequence this replica gave an event.
    case originSequence(UInt64)
    /// `store.generation`: the active projection generation (0 or 1).
    case generation(UInt64)
    /// `store.created`: the creation time, in milliseconds since 1970.
    case created(milliseconds: UInt64)
    /// `store.retired-replicas`: the replica ids the store wrote under before, oldest first.
    case retiredReplicas([ReplicaID])
    /// `store.rebuild-needed`: the projections must be rebuilt (the value carries nothing).
    case rebuildNeeded
    /// `store.configuration`: the recorded configuration.
    case configuration(ConfigurationRecord)
    /// `applied-through` (state): the projections have applied the log through this seq.
    case appliedThrough(UInt64)
    /// `search.index` (state): the search index's directory, summarized.
    case searchIndex(SearchIndexSummary)
    /// `index.runs` (state): the declared indexes' directory: how many runs they are stored in
    /// and the entries of those runs (tombstones and overridden entries included).
    case indexRuns(runs: Int, entries: UInt64)
    /// `count.<collection>` (state): the number of items in a collection.
    case itemCount(collection: String, count: Int64)
    /// `search.stats.<collection>` (state): the live search documents of a collection and the
    /// sum of their weighted lengths (for BM25).
    case searchTotals(collection: String, documents: UInt64, totalLength: UInt64)
    /// `search.dead.<chunk>` (state): a chunk of the dead-document bitmap: the doc ids it covers
    /// and how many of them are dead.
    case deadDocuments(documents: ClosedRange<UInt32>, dead: Int)
    /// `projection-version.<name>` (state): the version of a custom projection the generation
    /// was built with.
    case projectionVersion(name: String, version: UInt64)

    /// The prefix of engine keys in `meta`; other prefixes belong to the application and the
    /// sync module.
    package static let metaPrefix = "store."

    /// Decodes an entry of the `meta` database.
    ///
    /// - Returns: `nil` when `key` is not one of the engine's entries.
    /// - Throws: ``EventStoreError/Code/corrupt`` when it is one and `value` does not decode.
    package init?(metaKey key: String, value: [UInt8]) throws {
        switch key {
        case Meta.format: self = .formatVersion(try StoredEntry.uint64(value, key))
        case Meta.replica: self = .replicaID(try StoredEntry.replicaIDs(value, key, exactly: 1)[0])
        case Meta.hlc: self = .clock(HLCTimestamp(rawValue: try StoredEntry.uint64(value, key)))
        case Meta.originSequence: self = .originSequence(try StoredEntry.uint64(value, key))
        case Meta.generation: self = .generation(try StoredEntry.uint64(value, key))
        case Meta.created: self = .created(milliseconds: try StoredEntry.uint64(value, key))
        case Meta.retiredReplicas: self = .retiredReplicas(try StoredEntry.replicaIDs(value, key, exactly: nil))
        case Meta.rebuildNeeded: self = .rebuildNeeded
        case Meta.configuration: self = .configuration(try ConfigurationRecord(decoding: value))
        default: return nil
        }
    }

    /// Decodes an entry of a projection generation's `state` database.
    ///
    /// - Returns: `nil` when `key` is not one of the engine's entries.
    /// - Throws: ``EventStoreError/Code/corrupt`` when it is one and `value` does not decode.
    package init?(stateKey key: String, value: [UInt8]) throws {
        let utf8 = Array(key.utf8)
        let countPrefix = ProjectionWriter.countKey("")
        let versionPrefix = ProjectionWriter.versionKey("")
        if utf8 == ProjectionWriter.appliedKey {
            self = .appliedThrough(try StoredEntry.uint64(value, key))
        } else if utf8 == SegmentDirectory.key {
            self = .searchIndex(SearchIndexSummary(try value.withUnsafeBytes { try SegmentDirectory(decoding: $0) }))
        } else if utf8 == IndexRunDirectory.key {
            let directory = try value.withUnsafeBytes { try IndexRunDirectory(decoding: $0) }
            self = .indexRuns(runs: directory.runs.count, entries: directory.runs.reduce(0) { $0 &+ $1.entries })
        } else if utf8.starts(with: countPrefix) {
            guard value.count == 8 else { throw StoredEntry.corrupt(key, value) }
            self = .itemCount(
                collection: String(decoding: utf8.dropFirst(countPrefix.count), as: UTF8.self),
                count: Counter.decode(value))
        } else if utf8.starts(with: CollectionStats.keyPrefix) {
            let collection = String(decoding: utf8.dropFirst(CollectionStats.keyPrefix.count), as: UTF8.self)
            guard value.count == 16 else { throw StoredEntry.corrupt(key, value) }
            let stats = try CollectionStats.load(bytes: value)
            self = .searchTotals(collection: collection, documents: stats.documents, totalLength: stats.totalLength)
        } else if let chunk = DeadDocuments.chunk(ofKey: utf8) {
            guard value.count == DeadDocuments.chunkBytes else { throw StoredEntry.corrupt(key, value) }
            let first = chunk &* DeadDocuments.documentsPerChunk
            self = .deadDocuments(
                documents: first...(first &+ (DeadDocuments.documentsPerChunk - 1)),
                dead: value.reduce(0) { $0 + $1.nonzeroBitCount })
        } else if utf8.starts(with: versionPrefix) {
            self = .projectionVersion(
                name: String(decoding: utf8.dropFirst(versionPrefix.count), as: UTF8.self),
                version: try StoredEntry.uint64(value, key))
        } else {
            return nil
        }
    }

    private static func corrupt(_ key: String, _ value: [UInt8]) -> EventStoreError {
        EventStoreError(.corrupt, "\(key) holds \(value.count) bytes that do not decode")
    }

    /// An 8-byte big-endian integer.
    private static func uint64(_ value: [UInt8], _ key: String) throws -> UInt64 {
        guard value.count == 8 else { throw corrupt(key, value) }
        return value.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func replicaIDs(_ value: [UInt8], _ key: String, exactly count: Int?) throws -> [ReplicaID] {
        guard value.count % 16 == 0, count.map({ value.count == 16 * $0 }) ?? true else { throw corrupt(key, value) }
        return try value.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            return try (0..<(value.count / 16)).map { _ in try reader.readReplicaID() }
        }
    }
}

/// What `evstore dump --meta` shows of the search index's directory (``SegmentDirectory``).
package struct SearchIndexSummary: Sendable, Hashable {
    /// The next doc id.
    package var nextDocument: UInt32
    /// The live segments.
    package var segments: Int
    /// Postings in the live segments (dead ones included).
    package var postings: UInt64
    /// Whether a merge is under way.
    package var merging: Bool
    /// Clean-up steps left (segments to delete, document ranges to purge).
    package var cleanup: Int

    init(_ directory: SegmentDirectory) {
        nextDocument = directory.nextDoc
        segments = directory.segments.count
        // Saturating: the counts are read from the store, and damaged ones must not trap here.
        postings = directory.segments.reduce(0) { sum, segment in
            let (total, overflow) = sum.addingReportingOverflow(segment.postings)
            return overflow ? .max : total
        }
        merging = directory.merge != nil
        cleanup = directory.cleanup.count
    }

    /// One line: `N segments, P postings, next doc D[, merging][, C clean-up steps]`.
    package var text: String {
        var text = "\(segments) segments, \(postings) postings, next doc \(nextDocument)"
        if merging { text += ", merging" }
        if cleanup > 0 { text += ", \(cleanup) clean-up steps" }
        return text
    }
}
