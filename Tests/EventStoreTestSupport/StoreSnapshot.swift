public import EventStore

/// What two copies of the same log must agree on: every item (fields and version) as canonical
/// JSON, and the results (ids and scores) of a set of searches.
public struct StoreSnapshot: Equatable, CustomStringConvertible, Sendable {
    /// `collection/id@version fields`, in collection and id order.
    public var items: [String] = []
    /// `text|tags: collection/id=score,…` per query.
    public var search: [String] = []

    /// English, Korean, prefix, multi-word and tag-only searches.
    public static let defaultQueries: [SearchQuery] = [
        SearchQuery("alpha"), SearchQuery("be"), SearchQuery("gamma delta"), SearchQuery("동기화"),
        SearchQuery("", tags: ["work"]), SearchQuery("al", collection: "notes", limit: 5),
        SearchQuery("sync", limit: 5), SearchQuery("kiwi ledger"),
    ]

    /// Takes the snapshot of `collections` (every collection by default) in one read.
    public init(_ store: Store, collections: [String]? = nil, queries: [SearchQuery] = StoreSnapshot.defaultQueries)
        throws
    {
        try store.read { reader in
            for collection in try collections ?? reader.collections() {
                var page = try reader.items(in: collection, limit: 1000)
                while true {
                    for item in page.items {
                        let fields = String(decoding: Value.object(item.fields).jsonBytes(), as: UTF8.self)
                        items.append("\(collection)/\(item.id)@\(item.version.rawValue) \(fields)")
                    }
                    guard let next = page.next else { break }
                    page = try reader.items(in: collection, after: next, limit: 1000)
                }
            }
            for query in queries {
                let results = try reader.search(query)
                search.append(
                    "\(query.text)|\(query.tags): "
                        + results.map { "\($0.item.collection)/\($0.item.id)=\($0.score)" }.joined(separator: ","))
            }
        }
    }

    /// One line per item, then one per search.
    public var description: String { (items + search).joined(separator: "\n") }
}

/// The events of a store, in log order.
public func allEvents(of store: Store) throws -> [Event] {
    try store.read { reader in
        var events: [Event] = []
        try reader.forEachEvent {
            events.append($0); return true
        }
        return events
    }
}

/// The event ids of a store's log, in log order.
public func eventIDs(of store: Store) throws -> [EventID] {
    try allEvents(of: store).map(\.id)
}
