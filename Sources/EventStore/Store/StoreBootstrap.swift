import LMDB

/// Opening a store: recognise or create the layout, read identity, check versions.
struct StoreBootstrap {
    var schema: Schema
    var replicaID: ReplicaID
    var created: Bool
    var needsRebuild: Bool
    /// The search configuration in effect (see ``Store/SearchChange``).
    var search: SearchConfiguration
    /// The declared indexes in effect (see ``Store/IndexChange``).
    var indexes: [IndexDefinition]
    /// The collection schemas the store records.
    var schemas: [SchemaRecord] = []

    static func run(environment: Environment, configuration: Store.Configuration) throws -> StoreBootstrap {
        for projection in configuration.projections {
            try Validation.collection(projection.name)
        }
        try CollectionSchema.validate(configuration.schemas)
        do {
            if configuration.readOnly {
                return try environment.openDatabases { tx in
                    try openExisting(tx, configuration: configuration, path: environment.path)
                }
            }
            return try environment.write { tx in
                let main = try tx.openMainDatabase()
                if try tx.count(of: main) == 0 {
                    return try create(tx, configuration: configuration)
                }
                return try openExisting(tx, configuration: configuration, path: environment.path)
            }
        } catch let error as LMDBError {
            if error == .notFound {
                throw EventStoreError(
                    .notAStore, "\(environment.path) holds an LMDB environment that is not an event store")
            }
            if error == .incompatible {
                throw EventStoreError(
                    .notAStore, "\(environment.path) holds an incompatible LMDB environment", cause: error)
            }
            if error == .noSpace { throw EventStoreError(openFailure: error, path: environment.path) }
            throw EventStoreError(.storage, "cannot open \(environment.path)", cause: error)
        }
    }

    private static func create(_ tx: WriteTransaction, configuration: Store.Configuration) throws -> StoreBootstrap {
        try SchemaRegistry(schemas: configuration.schemas, recorded: []).checkMoves(of: configuration.schemas)
        let schema = try Schema.open(in: tx, create: true, projections: configuration.projections)
        let replica = configuration.replicaID ?? configuration.newReplicaID()
        try Meta.setReplicaID(tx, schema.meta, replica)
        try Meta.setUInt64(tx, schema.meta, Meta.format, Meta.currentFormat)
        try Meta.setUInt64(tx, schema.meta, Meta.generation, 0)
        try Meta.setUInt64(tx, schema.meta, Meta.created, configuration.physicalClock())
        let indexes = try IndexDefinition.validated(configuration.indexes)
        try Meta.setConfigurationRecord(tx, schema.meta, ConfigurationRecord(configuration: configuration))
        let writerForProjections = ProjectionWriter(databases: schema.generations[0], configuration: configuration)
        try writerForProjections.checkpoint(through: 0, tx: tx)
        return StoreBootstrap(
            schema: schema, replicaID: replica, created: true, needsRebuild: false, search: configuration.search,
            indexes: indexes)
    }

    private static func openExisting(_ tx: ReadTransaction, configuration: Store.Configuration, path: String) throws
        -> StoreBootstrap
    {
        let meta = try tx.openDatabase(named: "meta")
        guard let format = try Meta.uint64(tx, meta, Meta.format) else {
            throw EventStoreError(.notAStore, "the store's metadata has no format version")
        }
        guard format <= Meta.currentFormat else {
            throw EventStoreError(
                .unsupportedFormat, "the store uses format \(format); this library reads up to \(Meta.currentFormat)")
        }
        var upgrades = false
        // Format 6, and formats 4 and 5 without declared index entries, read as the current
        // format (see `upgrade`): a read-only open reads them as they are.
        let readOnly = configuration.readOnly || !(tx is WriteTransaction)
        let readableAsIs = try format >= 4 && readOnly && (format >= 6 || !hasIndexEntries(tx))
        if format < Meta.currentFormat && !readableAsIs {
            guard let tx = tx as? WriteTransaction, !configuration.readOnly else {
                throw EventStoreError(
                    .unsupportedFormat,
                    "the store uses format \(format), older than this library's \(Meta.currentFormat); open it for writing once to upgrade it (its projections are rebuilt from the log)"
                )
            }
            upgrades = try upgrade(tx, meta: meta, from: format)
        }
        let schema = try Schema.open(in: tx, create: !configuration.readOnly, projections: configuration.projections)
        let replica = try Meta.replicaID(tx, meta)
        // A rewrite of the log's stamps committed without the rebuild that follows it.
        var needsRebuild = try upgrades || Meta.rebuildIsNeeded(tx, meta)
        let generation = try StoreReader.activeGeneration(tx, schema)
        let recorded = try reconcile(
            tx, schema: schema, generation: generation, configuration: configuration, path: path)
        needsRebuild = needsRebuild || recorded.needsRebuild
        if !configuration.projections.isEmpty {
            for projection in configuration.projections {
                let stored = try tx.value(
                    forKey: ProjectionWriter.versionKey(projection.name), in: schema.generations[generation].state)
                if stored != Keys.seq(UInt64(projection.version)) { needsRebuild = true }
            }
        }
        return StoreBootstrap(
            schema: schema, replicaID: replica, created: false, needsRebuild: needsRebuild, search: recorded.search,
            indexes: recorded.indexes, schemas: recorded.schemas)
    }

    /// Brings a store of an older format to the current one: drops the databases the current
    /// format no longer has and marks the projections for a rebuild (in the same commit).
    /// Format 6 needs no rebuild, nor do formats 4 and 5 unless they hold declared index entries
    /// (format 6 keeps them in runs: ``IndexRuns``): every format-4 search segment entry (one
    /// term's list) is a format-5 entry too. Returns whether the projections must be rebuilt.
    private static func upgrade(_ tx: WriteTransaction, meta: Database, from format: UInt64) throws -> Bool {
        if format >= 6 {
            // Format 7 only adds the search merge's token, which format 6 never wrote.
            try Meta.setUInt64(tx, meta, Meta.format, Meta.currentFormat)
            return false
        }
        if format >= 4 {
            let rebuilds = try hasIndexEntries(tx)
            if rebuilds {
                for generation in 0..<2 {
                    if let database = try indexDatabase(tx, generation: generation) { try tx.removeAll(in: database) }
                }
                try Meta.setRebuildNeeded(tx, meta, true)
            }
            try Meta.setUInt64(tx, meta, Meta.format, Meta.currentFormat)
            return rebuilds
        }
        for generation in 0..<2 {
            for name in ProjectionDatabases.formerNames {
                do {
                    try tx.drop(try tx.openDatabase(named: "g\(generation).\(name)"))
                } catch let error as LMDBError where error == .notFound {
                    continue
                }
            }
        }
        try Meta.setRebuildNeeded(tx, meta, true)
        try Meta.setUInt64(tx, meta, Meta.format, Meta.currentFormat)
        return true
    }

    /// Whether either generation's `indexes` database holds entries.
    private static func hasIndexEntries(_ tx: ReadTransaction) throws -> Bool {
        try (0..<2).contains { try indexDatabase(tx, generation: $0).map { try tx.count(of: $0) > 0 } ?? false }
    }

    /// Generation `generation`'s `indexes` database, when the store has it.
    private static func indexDatabase(_ tx: ReadTransaction, generation: Int) throws -> Database? {
        do {
            return try tx.openDatabase(named: "g\(generation).indexes")
        } catch let error as LMDBError where error == .notFound {
            return nil
        }
    }
}
