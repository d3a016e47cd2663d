import LMDB

extension StoreBootstrap {
    /// What an open makes of the store's ``ConfigurationRecord``.
    struct ConfigurationOutcome {
        /// The search configuration in effect for this open.
        var search: SearchConfiguration
        /// The declared indexes in effect for this open.
        var indexes: [IndexDefinition]
        /// The collection schemas the store records after this open.
        var schemas: [SchemaRecord]
        /// Whether the projections must be rebuilt (the record changed in a way that invalidates
        /// them; ``Meta/rebuildNeeded`` is set in the same transaction).
        var needsRebuild: Bool
    }

    /// Compares the opening configuration with the store's record (see ``Store/SearchChange``)
    /// and, on a writable open (`tx` is a ``WriteTransaction``), brings the record up to date.
    ///
    /// - A store without a record gets the opening configuration (except with
    ///   ``Store/SearchChange/useStored``, which records nothing it does not know).
    /// - Another search configuration throws ``EventStoreError/Code/configurationMismatch``
    ///   (``Store/SearchChange/refuse``), is recorded with a rebuild (``Store/SearchChange/reindex``),
    ///   or is replaced by the recorded one (``Store/SearchChange/useStored``, and every read-only open).
    /// - Another tokenizer version is recorded with a rebuild.
    /// - Recorded custom projections this open does not register are kept as they are
    ///   (``Store/SearchChange/useStored``: a tool; its first commit that changes the log or
    ///   rebuilds marks them stale, see ``Store/markUnregisteredProjectionsStale(_:)``) or dropped
    ///   from the record with their version key removed (the application no longer registers
    ///   them); either way the next open that registers one after a change rebuilds. A registered
    ///   projection recorded stale triggers that rebuild.
    static func reconcile(
        _ tx: ReadTransaction, schema: Schema, generation: Int, configuration: Store.Configuration, path: String
    ) throws -> ConfigurationOutcome {
        let writable = tx as? WriteTransaction
        let record: ConfigurationRecord?
        do {
            record = try Meta.configurationRecord(tx, schema.meta)
        } catch let error as EventStoreError {
            guard let writable, configuration.searchChange == .reindex else {
                throw EventStoreError(
                    error.code == .unsupportedFormat ? .unsupportedFormat : .corrupt,
                    "the configuration record of \(path) (meta key \(Meta.configuration)) cannot be read: \(error.message). "
                        + "Opening the store for writing with Store.Configuration.searchChange = .reindex records the "
                        + "opening configuration and rebuilds the projections from the log",
                    cause: error)
            }
            let indexes = try IndexDefinition.validated(configuration.indexes)
            try Meta.setConfigurationRecord(writable, schema.meta, ConfigurationRecord(configuration: configuration))
            try Meta.setRebuildNeeded(writable, schema.meta, true)
            return ConfigurationOutcome(
                search: configuration.search, indexes: indexes, schemas: configuration.schemas.map(SchemaRecord.init),
                needsRebuild: true)
        }
        // Moves are checked against every schema the open will read with, before anything is written.
        try SchemaRegistry(schemas: configuration.schemas, recorded: record?.schemas ?? [])
            .checkMoves(of: configuration.schemas)
        guard let record else {
            var indexes: [IndexDefinition] = []
            var schemas: [SchemaRecord] = []
            if let writable, configuration.searchChange != .useStored {
                schemas = configuration.schemas.map(SchemaRecord.init)
                indexes = try reconcileIndexes(
                    writable, recorded: [], configuration: configuration, databases: schema.generations[generation],
                    rebuilds: false, path: path)
                var record = ConfigurationRecord(configuration: configuration)
                record.indexes = indexes
                try Meta.setConfigurationRecord(writable, schema.meta, record)
            }
            return ConfigurationOutcome(
                search: configuration.search, indexes: indexes, schemas: schemas, needsRebuild: false)
        }
        guard let writable else {
            // The projections were built with the recorded schemas: an open that reads them with
            // others (another version, other upcasters) would see items they do not describe.
            let reconciled = try reconcileSchemas(
                recorded: record.schemas, declared: configuration.schemas.map(SchemaRecord.init), path: path,
                keepingUndeclaredCode: configuration.schemas.isEmpty)
            guard !reconciled.changes else {
                throw EventStoreError(
                    .configurationMismatch,
                    "\(path) records other schemas than this read-only open declares (a raised version or other "
                        + "upcasters): open it for writing once to bring its projections up to date")
            }
            return ConfigurationOutcome(
                search: record.search, indexes: record.indexes, schemas: record.schemas, needsRebuild: false)
        }

        var search = configuration.search
        var recordedSearch = configuration.search
        var rebuild = false
        let differences = record.search.differences(from: configuration.search)
        switch configuration.searchChange {
        case _ where differences.isEmpty: break
        case .refuse: throw mismatch(path: path, differences: differences)
        case .reindex: rebuild = true
        case .useStored:
            search = record.search
            recordedSearch = record.search
        }
        if record.tokenizerVersion != Tokenizer.version { rebuild = true }
        // Schemas are reconciled whatever searchChange says (it is about search): a tool declares
        // none and keeps the recorded ones, upcasters in code included, which it leaves to
        // their owner; an application that declares them is held to them.
        let reconciled = try reconcileSchemas(
            recorded: record.schemas, declared: configuration.schemas.map(SchemaRecord.init), path: path,
            keepingUndeclaredCode: configuration.searchChange == .useStored && configuration.schemas.isEmpty)
        let schemas = reconciled.schemas
        if reconciled.changes { rebuild = true }

        let registered = Set(configuration.projections.map(\.name))
        var projections = configuration.projections.map { ProjectionRecord($0) }
        for recorded in record.projections where !registered.contains(recorded.name) {
            if configuration.searchChange == .useStored {
                projections.append(recorded)
            } else {
                _ = try writable.delete(
                    ProjectionWriter.versionKey(recorded.name), in: schema.generations[generation].state)
            }
        }
        if record.projections.contains(where: { $0.isStale && registered.contains($0.name) }) { rebuild = true }
        let rebuildPending = try rebuild || Meta.rebuildIsNeeded(tx, schema.meta)
        let indexes = try reconcileIndexes(
            writable, recorded: record.indexes, configuration: configuration, databases: schema.generations[generation],
            rebuilds: rebuildPending, path: path)

        try Meta.setConfigurationRecord(
            writable, schema.meta,
            ConfigurationRecord(
                search: recordedSearch, tokenizerVersion: Tokenizer.version, projections: projections, indexes: indexes,
                schemas: schemas))
        if rebuild { try Meta.setRebuildNeeded(writable, schema.meta, true) }
        return ConfigurationOutcome(search: search, indexes: indexes, schemas: schemas, needsRebuild: rebuild)
    }

    /// The schemas to record after an open that declares `declared` on a store that records
    /// `recorded` — every declared one, and the recorded ones it does not declare (a schema stays
    /// once its versions are in the log) — and whether they read the log differently from the
    /// recorded ones (a raised version, other upcasters, a new schema with upcasters), so that
    /// the projections are rebuilt.
    ///
    /// - Throws: ``EventStoreError/Code/configurationMismatch`` for a version below the recorded
    ///   one (an older application), or a recorded schema with upcasters in code that is not
    ///   declared, unless `keepingUndeclaredCode` (a tool, which declares no schema: it keeps it
    ///   as recorded and leaves the events that need it to the schema's owner).
    static func reconcileSchemas(
        recorded: [SchemaRecord], declared: [SchemaRecord], path: String, keepingUndeclaredCode: Bool = false
    ) throws -> (schemas: [SchemaRecord], changes: Bool) {
        let byName = Dictionary(declared.map { ($0.collection, $0) }, uniquingKeysWith: { first, _ in first })
        var schemas = declared
        var changes = false
        for old in recorded {
            guard let new = byName[old.collection] else {
                guard keepingUndeclaredCode || !old.hasCustomUpcasters else {
                    throw EventStoreError(
                        .configurationMismatch,
                        "\(path) reads \(old.collection) at schema version \(old.version) through upcasters in code, but "
                            + "this open declares no schema for it: add its CollectionSchema to Store.Configuration.schemas"
                    )
                }
                schemas.append(old)
                continue
            }
            guard new.version >= old.version else {
                throw EventStoreError(
                    .configurationMismatch,
                    "\(path) holds \(old.collection) at schema version \(old.version), newer than this open's "
                        + "\(new.version): open it with an application that knows version \(old.version)")
            }
            // Merge policies decide only how local writes become events: items do not depend on them.
            if new.version != old.version || new.upcasters != old.upcasters { changes = true }
        }
        let known = Set(recorded.map(\.collection))
        for new in declared where !known.contains(new.collection) && !new.upcasters.isEmpty { changes = true }
        return (schemas, changes)
    }

    private static func mismatch(path: String, differences: [String]) -> EventStoreError {
        EventStoreError(
            .configurationMismatch,
            "\(path) was indexed with another search configuration: \(differences.joined(separator: "; ")). "
                + "To re-index it with the new one, open it with Store.Configuration.searchChange = .reindex "
                + "(the projections are rebuilt from the log); to keep the recorded one, open it with "
                + "searchChange = .useStored, or with the recorded configuration (`evstore dump --meta` shows it)")
    }
}
