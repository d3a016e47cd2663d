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
        3 + 2 * (ProjectionDatabases.builtInNames.count + customProjections.reduce(0) { $0 + $1.databases.count })
            + 2 * ProjectionDatabases.formerNames.count + 2 /* g<N>.indexes */ + 4
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
    /// Per item: the doc id of its current search document.
    let searchItems: Database
    /// Per doc id: the document's weighted length and item key (``IndexedDocument``).
    let searchDocuments: Database
    /// Per segment and term: the term's postings in that segment (``PostingList``).
    let searchSegments: Database
    /// Per chunk of doc ids: the bitmap of dead documents (``DeadDocuments``).
    let searchDeleted: Database
    /// Per collection: live document count and total length (``CollectionStats``).
    let searchStats: Database
    /// Generation-local state: the checkpoint, counters, the search index's directory
    /// (``SegmentDirectory``), custom projection checkpoints.
    let state: Database
    /// Databases of custom projections, by `projection.database`.
    let custom: [String: Database]
    /// Per declared index, value and item: nothing (``IndexKey``). `nil` only in a read-only
    /// open of a store made before indexes existed (it has none).
    let indexes: Database?

    static let builtInNames = [
        "items", "item_events", "conflicts", "search_items", "search_documents", "search_segments", "search_deleted",
        "search_stats", "state",
    ]

    /// Search databases of store format 1, dropped when such a store is upgraded.
    static let formerNames = ["search_docs", "search_docids", "search_postings"]

    init(
        generation: Int, projections: [any Projection],
        open: (String, DatabaseOptions) throws -> Database
    ) throws {
        let prefix = "g\(generation)."
        items = try open(prefix + "items", [])
        itemEvents = try open(prefix + "item_events", [])
        conflicts = try open(prefix + "conflicts", [])
        searchItems = try open(prefix + "search_items", [])
        searchDocuments = try open(prefix + "search_documents", [])
        searchSegments = try open(prefix + "search_segments", [])
        searchDeleted = try open(prefix + "search_deleted", [])
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
        do {
            indexes = try open(prefix + "indexes", [])
        } catch let error as LMDBError where error == .notFound {
            indexes = nil
        }
    }

    /// Every database of the generation with its unqualified name, in a fixed order.
    var all: [(name: String, database: Database)] {
        [
            ("items", items), ("item_events", itemEvents), ("conflicts", conflicts), ("search_items", searchItems),
            ("search_documents", searchDocuments), ("search_segments", searchSegments), ("search_deleted", searchDeleted),
            ("search_stats", searchStats), ("state", state),
        ] + custom.keys.sorted().map { ("p." + $0, custom[$0]!) } + (indexes.map { [("indexes", $0)] } ?? [])
    }
}
