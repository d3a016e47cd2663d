import LMDB

/// The named databases of a store, opened once at start-up.
///
/// The log (`events`, `event_ids`) and `meta` exist once. Everything derived from the log lives
/// in a *projection generation* (`g0.*` or `g1.*`): a rebuild fills the inactive generation while
/// readers keep using the active one, then switches in one commit.
struct Schema: Sendable {
    let main: Database
    let events: Database
    let eventIDs: Database
    let meta: Database
    let generations: [ProjectionDatabases]

    /// Names of the log databases.
    static let logDatabaseNames = ["events", "event_ids", "meta"]

    static func databaseCount(customProjections: [any Projection]) -> Int {
        3 + 2 * (ProjectionDatabases.builtInNames.count + customProjections.reduce(0) { $0 + $1.databases.count }) + 4
    }

    /// Opens (and with `create`, creates) every database.
    static func open(in tx: ReadTransaction, create: Bool, projections: [any Projection]) throws -> Schema {
        func open(_ name: String, _ options: DatabaseOptions = []) throws -> Database {
            if create, let tx = tx as? WriteTransaction { return try tx.openDatabase(named: name, options: options.union(.create)) }
            return try tx.openDatabase(named: name)
        }
        let main = try tx.openMainDatabase()
        let generations = try (0..<2).map { generation in
            try ProjectionDatabases(generation: generation, projections: projections, open: open)
        }
        return Schema(
            main: main, events: try open("events"), eventIDs: try open("event_ids"), meta: try open("meta"),
            generations: generations)
    }
}

/// The databases of one projection generation.
struct ProjectionDatabases: Sendable {
    /// Per item: its merged state (``ItemState``).
    let items: Database
    /// Per item and seq: nothing (the item's history, for replay and explain).
    let itemEvents: Database
    /// Per item, seq and field: a ``ConflictRecord``.
    let conflicts: Database
    /// Per item: its search document (doc id, length, terms).
    let searchDocs: Database
    /// Per doc id: the item key.
    let searchDocIDs: Database
    /// Per collection and term: postings (doc id + weighted term frequency), duplicate-sorted.
    let searchPostings: Database
    /// Per collection: document count and total length.
    let searchStats: Database
    /// Generation-local state: the next doc id, custom projection checkpoints.
    let state: Database
    /// Databases of custom projections, by `projection.database`.
    let custom: [String: Database]

    static let builtInNames = [
        "items", "item_events", "conflicts", "search_docs", "search_docids", "search_postings", "search_stats", "state",
    ]

    init(
        generation: Int, projections: [any Projection],
        open: (String, DatabaseOptions) throws -> Database
    ) throws {
        let prefix = "g\(generation)."
        items = try open(prefix + "items", [])
        itemEvents = try open(prefix + "item_events", [])
        conflicts = try open(prefix + "conflicts", [])
        searchDocs = try open(prefix + "search_docs", [])
        searchDocIDs = try open(prefix + "search_docids", [])
        searchPostings = try open(prefix + "search_postings", [.duplicateSort, .duplicateFixed])
        searchStats = try open(prefix + "search_stats", [])
        state = try open(prefix + "state", [])
        var custom: [String: Database] = [:]
        for projection in projections {
            for name in projection.databases {
                let qualified = "\(projection.name).\(name)"
                custom[qualified] = try open(prefix + "p." + qualified, [])
            }
        }
        self.custom = custom
    }

    /// Every database of the generation with its unqualified name, in a fixed order.
    var all: [(name: String, database: Database)] {
        [
            ("items", items), ("item_events", itemEvents), ("conflicts", conflicts), ("search_docs", searchDocs),
            ("search_docids", searchDocIDs), ("search_postings", searchPostings), ("search_stats", searchStats),
            ("state", state),
        ] + custom.keys.sorted().map { ("p." + $0, custom[$0]!) }
    }
}
