extension Store.Configuration {
    /// This configuration with what the collection schemas declare about search and indexes
    /// (``CollectionSchema/searchFields``, ``CollectionSchema/indexes``) folded into ``search``
    /// and ``indexes``, where the rest of the store reads them.
    ///
    /// - Throws: ``EventStoreError/Code/configurationMismatch`` when a schema and ``search``
    ///   both declare a collection's searchable fields, differently.
    func foldingSchemas() throws -> Store.Configuration {
        var folded = self
        for schema in schemas {
            if let fields = schema.searchFields {
                if let declared = search.collections[schema.collection], declared != fields {
                    throw EventStoreError(
                        .configurationMismatch,
                        "the searchable fields of \(schema.collection) are declared twice, differently: in its "
                            + "CollectionSchema and in Store.Configuration.search.collections (declare them once)")
                }
                folded.search.collections[schema.collection] = fields
            }
            for fields in schema.indexes {
                let index = IndexDefinition(schema.collection, fields: fields)
                if !folded.indexes.contains(index) { folded.indexes.append(index) }
            }
        }
        return folded
    }
}
