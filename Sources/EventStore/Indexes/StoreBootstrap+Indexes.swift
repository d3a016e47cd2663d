import LMDB

extension StoreBootstrap {
    /// The indexes in effect for a writable open, after bringing the active generation in line
    /// with them (see ``Store/IndexChange``): indexes new to the store are built from its items
    /// and dropped ones removed, in the open's transaction, unless `rebuilds` (a rebuild of every
    /// projection follows, which builds them anyway).
    ///
    /// - Parameter recorded: The indexes the store records (empty without a record).
    static func reconcileIndexes(
        _ tx: WriteTransaction, recorded: [IndexDefinition], configuration: Store.Configuration,
        databases: ProjectionDatabases, rebuilds: Bool, path: String
    ) throws -> [IndexDefinition] {
        let declared = try IndexDefinition.validated(configuration.indexes)
        let recordedSet = Set(recorded)
        let effective: [IndexDefinition]
        switch configuration.indexChange {
        case .useStored: effective = recorded
        case .build: effective = IndexDefinition.canonical(recorded + declared)
        case .replace: effective = declared
        case .refuse:
            let added = declared.filter { !recordedSet.contains($0) }
            guard added.isEmpty else {
                throw EventStoreError(
                    .configurationMismatch,
                    "\(path) has no index \(added.map(\.name).joined(separator: ", ")). To build it from the items, "
                        + "open the store with Store.Configuration.indexChange = .build (the default); to use the "
                        + "store's own indexes, with indexChange = .useStored")
            }
            effective = recorded
        }
        _ = try IndexDefinition.validated(effective)
        guard !rebuilds, databases.indexes != nil else { return effective }
        let effectiveSet = Set(effective)
        for index in recorded where !effectiveSet.contains(index) {
            try IndexWriter.drop(index, databases: databases, tx: tx)
        }
        let added = effective.filter { !recordedSet.contains($0) }
        if !added.isEmpty {
            try IndexWriter.build(added, databases: databases, tx: tx)
        }
        return effective
    }
}

extension IndexDefinition {
    /// `definitions` in canonical order, each checked (``validate()``), and no two sharing a key
    /// prefix (``id``).
    ///
    /// - Throws: ``EventStoreError/Code/invalidName`` for a definition that cannot be declared.
    static func validated(_ definitions: [IndexDefinition]) throws -> [IndexDefinition] {
        let canonical = IndexDefinition.canonical(definitions)
        var ids: [UInt32: IndexDefinition] = [:]
        for definition in canonical {
            try definition.validate()
            if let other = ids.updateValue(definition, forKey: definition.id) {
                throw EventStoreError(
                    .invalidName,
                    "indexes \(other.name) and \(definition.name) have the same key prefix; rename a field or declare only one"
                )
            }
        }
        return canonical
    }
}
