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
            if create, let tx = tx as? WriteTransaction {
                return try tx.openDatabase(named: name, options: options.union(.create))
            }
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
final class ProjectionDatabases: Sendable {
    /// Per item: its record (``ItemRecord``: merged state, newest seqs, search doc id), followed
    /// by the chunks of its older history (``ItemHistory``), for replay and explain.
    let items: Database
    /// Per item, seq and field: a ``ConflictRecord``.
    let conflicts: Database
    /// Per doc id: the document's weighted length and item key (``IndexedDocument``).
    let searchDocuments: Database
    /// Per segment and term: the term's postings in that segment (``PostingList``).
    let searchSegments: Database
    /// Generation-local state: the checkpoint, counters, custom projection checkpoints, and the
    /// search index's directory (``SegmentDirectory``), dead-document bitmap (``DeadDocuments``)
    /// and collection totals (``CollectionStats``), so that a commit's bookkeeping dirties one
    /// small tree.
    let state: Database
    /// Databases of custom projections, by `projection.database`.
    let custom: [String: Database]
    /// Per declared index, value and item: nothing (``IndexKey``). `nil` only in a read-only
    /// open of a store made before indexes existed (it has none).
    let indexes: Database?

    static let builtInNames = [
        "items", "conflicts", "search_documents", "search_segments", "state",
    ]

    /// Databases of earlier store formats, dropped when such a store is upgraded: the search
    /// index of format 1, and the tables format 3 folded into `items` and `state`.
    static let formerNames = [
        "search_docs", "search_docids", "search_postings", "item_events", "search_items", "search_deleted",
        "search_stats",
    ]

    init(
        generation: Int, projections: [any Projection],
        open: (String, DatabaseOptions) throws -> Database
    ) throws {
        let prefix = "g\(generation)."
        items = try open(prefix + "items", [])
        conflicts = try open(prefix + "conflicts", [])
        searchDocuments = try open(prefix + "search_documents", [])
        searchSegments = try open(prefix + "search_segments", [])
        state = try open(prefix + "state", [])
        var custom: [String: Database] = [:]
        for projection in projections {
            for name in projection.databases {
                let qualified = "\(projection.name).\(name)"
                do {
                    custom[qualified] = try open(prefix + "p." + qualified, [])
                } catch let error as LMDBError where error == .notFound {
                    // A read-only open (which creates nothing) of a store no writable open with
                    // this projection has made its databases in yet.
                    throw EventStoreError(
                        .configurationMismatch,
                        "the store has no database \(qualified.debugDescription) of custom projection "
                            + "\(projection.name.debugDescription): no writable open registering it has opened the store "
                            + "yet; open it for writing with the projection once, or read it without the projection",
                        cause: error)
                }
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
            ("items", items), ("conflicts", conflicts),
            ("search_documents", searchDocuments), ("search_segments", searchSegments), ("state", state),
        ] + custom.keys.sorted().map { ("p." + $0, custom[$0]!) } + (indexes.map { [("indexes", $0)] } ?? [])
    }
}
