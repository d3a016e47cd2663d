import EventStore
import EventStoreTestSupport
import Foundation

/// The current time in milliseconds since 1970 (stamps near it pass the clock-skew check of a
/// binary that ingests them).
func systemMilliseconds() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

/// Runs `body` in a new temporary directory (its name starts with `prefix`), then removes the
/// directory and every store and file the test left in it.
@discardableResult
func withTemporaryDirectory<T>(prefix: String, _ body: (TemporaryDirectory) async throws -> T) async rethrows -> T {
    let directory = TemporaryDirectory(prefix: prefix)
    defer { directory.remove() }
    return try await body(directory)
}

/// Opens a store with a fixed replica id and, optionally, a manual clock.
func openStore(_ path: String, replica: ReplicaID? = nil, clock: ManualClock? = nil) throws -> Store {
    var configuration = Store.Configuration()
    configuration.replicaID = replica
    if let clock { configuration.physicalClock = clock.function }
    return try Store.open(at: path, configuration: configuration)
}

/// Opens the store at `path`, runs `body`, and closes it, so that the binary then has the
/// directory to itself.
@discardableResult
func withStore<T>(at path: String, replica: ReplicaID? = nil, clock: ManualClock? = nil, _ body: (Store) throws -> T)
    throws -> T
{
    let store = try openStore(path, replica: replica, clock: clock)
    defer { store.close() }
    return try body(store)
}

/// Opens replica A's store at `pathA` and replica B's at `pathB` (``MixedStore/replicaA`` and
/// ``MixedStore/replicaB``), each with its own manual clock, both starting now; runs `body` with
/// them, and closes both stores.
func withReplicas<T>(
    _ pathA: String, _ pathB: String,
    _ body: (_ a: Store, _ clockA: ManualClock, _ b: Store, _ clockB: ManualClock) throws -> T
) throws -> T {
    let start = systemMilliseconds()
    let clockA = ManualClock(start: start)
    let clockB = ManualClock(start: start)
    let a = try openStore(pathA, replica: MixedStore.replicaA, clock: clockA)
    let b = try openStore(pathB, replica: MixedStore.replicaB, clock: clockB)
    defer {
        a.close()
        b.close()
    }
    return try body(a, clockA, b, clockB)
}

/// Every event of a store, in log order.
func allEvents(_ store: Store) throws -> [Event] {
    try store.read { reader in
        var events: [Event] = []
        try reader.forEachEvent { event in
            events.append(event)
            return true
        }
        return events
    }
}

/// An item as the tests expect it: fields and version (the stamp of the last event applied).
struct ExpectedItem: Equatable, CustomStringConvertible {
    var collection: String
    var id: String
    var fields: [String: Value]
    var version: HLCTimestamp

    var key: String { "\(collection)/\(id)" }
    var description: String { "\(key) \(JSONLines.canonical(fields: fields)) @\(version.rawValue)" }
}

/// The state a single replica holds after `writes`, computed without the store: a put replaces
/// the fields, a patch sets the fields it names, a delete removes the item. With one replica every
/// stamp is greater than the one before, so folding in order is the merge. Keyed `collection/id`.
func foldWrites(_ writes: [(change: Change, hlc: HLCTimestamp)]) -> [String: ExpectedItem] {
    var items: [String: ExpectedItem] = [:]
    for (change, hlc) in writes {
        let key = "\(change.collection)/\(change.item)"
        switch change.operation {
        case .put:
            items[key] = ExpectedItem(
                collection: change.collection, id: change.item, fields: change.fields, version: hlc)
        case .patch:
            var item =
                items[key] ?? ExpectedItem(collection: change.collection, id: change.item, fields: [:], version: hlc)
            item.fields.merge(change.fields) { _, new in new }
            item.version = hlc
            items[key] = item
        case .delete:
            items[key] = nil
        }
    }
    return items
}

/// A store written by two replicas, A and B, with one concurrent edit: both change
/// `notes/n1.content` without seeing the other's write; B's write is stamped later and wins.
///
/// A's log (the store at ``path``):
/// 1. A put notes/n1 · 2. A put notes/n2 · 3. A put tasks/t1 · 4. A patch notes/n1 (title)
/// 5. A delete notes/n2 · 6. A put notes/n3 (Korean) · 7. A patch notes/n1 (content)
/// 8. B patch notes/n1 (content), ingested from B.
///
/// B's log (the store at ``otherPath``) holds the same events: 1–6, then its own patch, then A's.
struct MixedStore {
    static let replicaA = ReplicaID(hex: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")!
    static let replicaB = ReplicaID(hex: "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2")!

    /// The writes both replicas share (A made them, B ingested them).
    static let sharedChanges: [Change] = [
        .put("notes", id: "n1", fields: ["title": "First note", "content": "hello world", "rank": 1]),
        .put("notes", id: "n2", fields: ["title": "Second note", "tags": ["work"]]),
        .put("tasks", id: "t1", fields: ["title": "Buy milk", "done": false, "weight": 1.25, "tags": ["home"]]),
        .patch("notes", id: "n1", fields: ["title": "First note, edited"]),
        .delete("notes", id: "n2"),
        .put("notes", id: "n3", fields: ["title": "동기화 회의", "content": "오프라인에서 동기화를 테스트했다", "tags": ["회의"]]),
    ]
    /// A's concurrent write.
    static let changeOnA = Change.patch("notes", id: "n1", fields: ["content": "edited on A"])
    /// B's concurrent write, stamped later: it wins.
    static let changeOnB = Change.patch("notes", id: "n1", fields: ["content": "edited on B"])

    /// The items both replicas hold at the end.
    static let expectedItems: [String: [String: Value]] = [
        "notes/n1": ["title": "First note, edited", "content": "edited on B", "rank": 1],
        "notes/n3": ["title": "동기화 회의", "content": "오프라인에서 동기화를 테스트했다", "tags": ["회의"]],
        "tasks/t1": ["title": "Buy milk", "done": false, "weight": 1.25, "tags": ["home"]],
    ]

    /// Replica A's store.
    let path: String
    /// Replica B's store.
    let otherPath: String
    /// A's log, in order.
    let events: [Event]
    /// B's log, in order.
    let otherEvents: [Event]

    /// Writes both stores inside `directory` and closes them.
    init(in directory: TemporaryDirectory) throws {
        path = directory.appending("replica-a")
        otherPath = directory.appending("replica-b")
        let logs = try withReplicas(path, otherPath) { storeA, clockA, storeB, clockB in
            var shared: [Event] = []
            for change in MixedStore.sharedChanges {
                clockA.advance(by: 10)
                shared += try storeA.append([change])
            }
            clockB.set(clockA.now)
            _ = try storeB.ingest(shared)
            clockA.advance(by: 100)
            let fromA = try storeA.append([MixedStore.changeOnA])
            clockB.advance(by: 200)
            let fromB = try storeB.append([MixedStore.changeOnB])
            _ = try storeA.ingest(fromB)
            _ = try storeB.ingest(fromA)
            return try (a: allEvents(storeA), b: allEvents(storeB))
        }
        events = logs.a
        otherEvents = logs.b
    }

    /// The version (greatest stamp) of an item in A's log.
    func version(of key: String) -> HLCTimestamp? {
        events.filter { "\($0.collection)/\($0.item)" == key }.map(\.hlc).max()
    }
}

/// A single replica's history of seeded random puts, patches and deletes over a few items in
/// two collections. Every written value is unique, so each write changes every field it names.
struct SingleReplicaHistory {
    /// The store.
    let path: String
    /// The changes, in the order they were appended (event `i + 1` is `changes[i]`).
    let changes: [Change]
    /// The events the store returned, in order.
    let events: [Event]

    /// Appends `count` random changes (from `seed`) to a new store at `path`, then closes it.
    /// The store's clock starts at `clockStart` (default: now) and moves `step` milliseconds
    /// before each change.
    init(path: String, count: Int, seed: UInt64, clockStart: UInt64? = nil, step: Int64 = 3) throws {
        self.path = path
        var random = SeededGenerator(seed: seed)
        let items = [("notes", "a"), ("notes", "b"), ("notes", "c"), ("tasks", "a"), ("tasks", "b")]
        var live = Set<String>()
        var changes: [Change] = []
        for index in 0..<count {
            let (collection, id) = items[Int.random(in: 0..<items.count, using: &random)]
            let key = "\(collection)/\(id)"
            var fields: [String: Value] = [:]
            let names = ["title", "content", "n", "score", "tags"].filter { _ in Bool.random(using: &random) }
            for name in names.isEmpty ? ["title"] : names {
                switch name {
                case "title": fields[name] = .string("title \(index)")
                case "content": fields[name] = .string("content of write \(index) — 내용 \(index)")
                case "n": fields[name] = .int(Int64(index * 1000 + 7))
                case "score": fields[name] = .double(Double(index) + 0.25)
                default: fields[name] = .array([.string("tag\(index)"), .int(Int64(index))])
                }
            }
            let roll = Int.random(in: 0..<100, using: &random)
            let change: Change
            if live.contains(key) && roll < 20 {
                change = .delete(collection, id: id)
                live.remove(key)
            } else if roll < 55 {
                change = .put(collection, id: id, fields: fields)
                live.insert(key)
            } else {
                change = .patch(collection, id: id, fields: fields)
                live.insert(key)
            }
            changes.append(change)
        }
        self.changes = changes
        let clock = ManualClock(start: clockStart ?? systemMilliseconds())
        events = try withStore(at: path, clock: clock) { store in
            var events: [Event] = []
            for change in changes {
                clock.advance(by: step)
                events += try store.append([change])
            }
            return events
        }
    }

    /// The items after the first `count` events, computed by ``foldWrites(_:)``.
    func expectedItems(after count: Int) -> [String: ExpectedItem] {
        foldWrites(Array(zip(changes.prefix(count), events.prefix(count).map(\.hlc))))
    }
}
