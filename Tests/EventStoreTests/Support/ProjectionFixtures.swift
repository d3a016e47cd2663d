import EventStoreTestSupport
import Foundation
import LMDB
import Testing

@testable import EventStore

/// Helpers of the projection suites: event builders, random field values with English and Korean
/// text (for ``CoreFixtures/randomHistory(seed:origins:events:values:collections:items:fieldNames:)``),
/// a declarative statement of the merge rule, and raw views of a store's projections.
enum ProjectionFixtures {
    /// A fixed moment, so stamps never depend on the machine's clock.
    static let epoch: UInt64 = 1_800_000_000_000

    /// Words for generated text: English and Korean (Korean with particles, as written).
    static let words = [
        "offline", "sync", "merge", "clock", "replica", "search", "garden", "recipe", "travel", "budget",
        "meeting", "draft", "동기화를", "오프라인에서", "메모", "회의록", "여행", "일정", "검색", "정리했다",
    ]
    static let tags = ["work", "home", "travel", "urgent", "회의", "여행", "요리"]

    // MARK: Events

    /// An event as another replica would send it.
    static func event(
        _ origin: ReplicaID, _ sequence: UInt64, at hlc: HLCTimestamp, base: HLCTimestamp = .zero,
        _ collection: String = "notes", _ item: String, _ operation: EventOperation, _ fields: [String: Value] = [:]
    ) -> Event {
        Event(
            id: EventID(origin: origin, sequence: sequence), hlc: hlc, base: base, collection: collection, item: item,
            operation: operation, fields: operation == .delete ? [:] : fields)
    }

    /// A short random text of `count` words.
    static func text(_ random: inout SeededGenerator, words count: Int) -> String {
        (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
    }

    /// A random field value: mostly text and tags, sometimes numbers, flags, null or nested values.
    static func value(for field: String, _ random: inout SeededGenerator) -> Value {
        switch field {
        case "title": return .string(text(&random, words: 1 + Int(random.next() % 4)))
        case "content": return .string(text(&random, words: 3 + Int(random.next() % 8)))
        case "tags":
            return .array(
                (0..<Int(random.next() % 3)).map { _ in .string(tags[Int(random.next() % UInt64(tags.count))]) })
        case "done": return random.next() % 5 == 0 ? .null : .bool(random.next() % 2 == 0)
        default:
            return random.next() % 3 == 0
                ? .object(["n": .int(Int64(random.next() % 7)), "u": .double(Double(random.next() % 100) / 4)])
                : .int(Int64(random.next() % 1_000) - 500)
        }
    }

    /// The fields random events write.
    static let fieldNames = ["title", "content", "tags", "done", "rank"]

    // MARK: The merge rule, stated declaratively

    /// The fields of an item after a *set* of its events, or `nil` when it does not exist.
    ///
    /// Stated as a whole-set rule rather than step by step: each field holds the write with the
    /// greatest stamp among the events naming it, unless a put or delete with a greater stamp
    /// cleared it; the item exists when a field is left or its greatest put/delete is a put.
    static func expected(_ events: [Event]) -> [String: Value]? {
        let unique = Dictionary(events.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }).values
        let floor = unique.filter { $0.operation != .patch }.max { $0.stamp < $1.stamp }
        var fields: [String: Value] = [:]
        for name in Set(unique.flatMap(\.fields.keys)) {
            let writer = unique.filter { $0.fields[name] != nil }.max { $0.stamp < $1.stamp }!
            if let floor, writer.stamp < floor.stamp { continue }
            fields[name] = writer.fields[name]
        }
        if fields.isEmpty && floor?.operation != .put { return nil }
        return fields
    }

    /// The expected items of every collection after `events`: collection → id → fields.
    static func expectedItems(_ events: [Event]) -> [String: [String: [String: Value]]] {
        var grouped: [String: [String: [Event]]] = [:]
        for event in events { grouped[event.collection, default: [:]][event.item, default: []].append(event) }
        return grouped.mapValues { $0.compactMapValues(expected) }.filter { !$0.value.isEmpty }
    }

    // MARK: Stores

    /// A configuration with a fixed clock near ``epoch`` and no fsync per commit (these suites
    /// test projections, not durability).
    static func configuration(clock: ManualClock? = nil, replica: ReplicaID? = nil) -> Store.Configuration {
        var configuration = Store.Configuration()
        let clock = clock ?? ManualClock(start: epoch + 10_000)
        configuration.physicalClock = clock.function
        configuration.durability = .bulk
        configuration.replicaID = replica
        return configuration
    }

    /// Every item of a collection, page by page.
    static func items(_ store: Store, in collection: String, pageSize: Int = 500) throws -> [Item] {
        try store.read { reader throws in
            var page = try reader.items(in: collection, limit: pageSize)
            var items = page.items
            while let next = page.next {
                page = try reader.items(in: collection, after: next, limit: pageSize)
                items += page.items
            }
            return items
        }
    }

    /// Every existing item of the store: collection → id → fields.
    static func state(_ store: Store) throws -> [String: [String: [String: Value]]] {
        var state: [String: [String: [String: Value]]] = [:]
        for collection in try store.read({ try $0.collections() }) {
            let items = try self.items(store, in: collection)
            if !items.isEmpty { state[collection] = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.fields) }) }
        }
        return state
    }

    /// The raw entries (key, value) of one database of the active projection generation.
    /// The `items` entries with each record cut to the item's state: what replicas agree on byte
    /// for byte (the search doc id after it depends on how commits were grouped). Histories
    /// (which name local seqs) are kept with `history` (each record's newest seqs, and the
    /// chunks), left out without.
    static func itemStates(_ store: Store, history: Bool = false) throws -> [[UInt8]] {
        try entries(store, "items").slices(of: 2).flatMap { pair -> [[UInt8]] in
            if pair[0].withUnsafeBytes(Keys.isItemHistory) { return history ? pair : [] }
            return [
                pair[0],
                try pair[1].withUnsafeBytes { value in
                    history
                        ? Array(pair[0].withUnsafeBytes { ItemRecord.comparableBytes(key: $0, value: value) })
                        : Array(try ItemRecord.stateBytes(of: value))
                },
            ]
        }
    }

    static func entries(_ store: Store, _ database: String) throws -> [[UInt8]] {
        try store.read { reader throws in
            guard let db = try reader.projection.all.first(where: { $0.name == database })?.database else {
                Issue.record("no projection database \(database)")
                return []
            }
            var entries: [[UInt8]] = []
            try reader.tx.forEach(in: db) { key, value in
                entries.append(Array(key))
                entries.append(Array(value))
                return true
            }
            return entries
        }
    }

    /// What a scratch build holds: each item record as verify compares it (the doc id aside),
    /// and the search index's contents.
    static func scratchContents(_ scratch: ScratchProjections) throws -> [[UInt8]] {
        try scratch.environment.read { tx in
            var contents: [[UInt8]] = []
            try tx.forEach(in: scratch.databases.items) { key, value in
                contents.append(Array(key))
                contents.append(Array(ItemRecord.comparableBytes(key: key, value: value)))
                return true
            }
            return contents
                + (try SearchIndexAudit.contents(tx: tx, databases: scratch.databases).map { Array($0.utf8) })
        }
    }

    /// Every projection database's entries, except the search index's and the declared indexes',
    /// which are given by their meaning under `search (contents)` and `indexes (contents)`:
    /// segments, runs and doc ids depend on how commits were grouped.
    static func projectionBytes(_ store: Store) throws -> [String: [[UInt8]]] {
        let names = try store.read { reader in try reader.projection.all.map(\.name) }
            .filter { !SearchIndexAudit.databaseNames.contains($0) && $0 != IndexAudit.databaseName }
        var result = Dictionary(uniqueKeysWithValues: try names.map { ($0, try entries(store, $0)) })
        if let state = result["state"] {
            // Keys and values alternate; drop the pairs that name doc ids, segments or runs: the
            // directories and the dead-document bitmap.
            var kept: [[UInt8]] = []
            for pair in state.slices(of: 2)
            where pair[0] != SegmentDirectory.key && pair[0] != IndexRunDirectory.key
                && !pair[0].starts(with: DeadDocuments.keyPrefix)
            {
                kept.append(contentsOf: pair)
            }
            result["state"] = kept
        }
        // Each item's state, without its doc id (compared by the search contents below).
        result["items"] = try itemStates(store, history: true)
        result["search (contents)"] = try store.read { reader in
            try SearchIndexAudit.contents(tx: reader.tx, databases: reader.projection).map { Array($0.utf8) }
        }
        result["indexes (contents)"] = try store.read { reader in
            try IndexAudit.contents(tx: reader.tx, databases: reader.projection)
        }
        return result
    }

    /// Search results as comparable strings: id and score, best first.
    static func hits(_ store: Store, _ query: SearchQuery) throws -> [String] {
        try store.search(query).map { "\($0.item.collection)/\($0.item.id) \($0.score)" }
    }
}

extension Array {
    /// The elements in consecutive slices of at most `size` (the last may be shorter).
    func slices(of size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(size, 1)).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
