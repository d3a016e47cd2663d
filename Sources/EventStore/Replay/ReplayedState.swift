import LMDB

/// The projections of a store as they were at a ``ReplayPoint``, rebuilt from the log into a
/// scratch environment by ``Store/replay(to:progress:)``. The scratch data is deleted when the
/// value goes away.
public final class ReplayedState: @unchecked Sendable {
    /// The point replayed to.
    public let point: ReplayPoint
    /// The number of events applied.
    public let eventsApplied: UInt64
    let scratch: ScratchProjections

    init(point: ReplayPoint, eventsApplied: UInt64, scratch: ScratchProjections) {
        self.point = point
        self.eventsApplied = eventsApplied
        self.scratch = scratch
    }

    /// The item as it was, or `nil` when it did not exist then.
    public func item(_ collection: String, _ id: String) throws -> Item? {
        try scratch.environment.read { tx in
            try Keys.item(collection, id).withUnsafeBytes { key in
                try tx.value(forKey: key, in: scratch.databases.items).map { try ItemRecord(decoding: $0).state }
            }
        }.flatMap { $0.exists ? $0.item(collection: collection, id: id) : nil }
    }

    /// Calls `body` with every item that existed, in collection and id order, until it returns `false`.
    public func forEachItem(in collection: String? = nil, _ body: (Item) throws -> Bool) throws {
        let prefix = collection.map(Keys.collectionPrefix) ?? []
        try scratch.environment.read { tx in
            try ItemRecord.forEach(in: scratch.databases.items, tx: tx, from: prefix.isEmpty ? nil : prefix) {
                key, value in
                guard key.starts(with: prefix) else { return false }
                let state = try ItemRecord(decoding: value).state
                guard state.exists else { return true }
                let (collection, id) = try Keys.splitItem(key)
                return try body(state.item(collection: collection, id: id))
            }
        }
    }

    /// Every item that existed, optionally in one collection.
    public func items(in collection: String? = nil) throws -> [Item] {
        var items: [Item] = []
        try forEachItem(in: collection) {
            items.append($0); return true
        }
        return items
    }
}
