extension StoreReader {
    /// The configuration the store records (``ConfigurationRecord``), or `nil` for a store made
    /// by a version without records that no writable open has recorded yet.
    ///
    /// ```swift
    /// let record = try store.read { try $0.configurationRecord() }
    /// ```
    ///
    /// - Throws: ``EventStoreError/Code/corrupt`` when the record cannot be decoded.
    public func configurationRecord() throws -> ConfigurationRecord? {
        try Meta.configurationRecord(tx, store.schema.meta)
    }

    /// The custom projections the store records that this process does not register: their
    /// data is not checked by ``Store/verify(progress:)`` nor rebuilt by
    /// ``Store/rebuildProjections(progress:)`` here, but left to the application that registers
    /// them (its next writable open rebuilds them when a process without them wrote the store).
    ///
    /// - Throws: ``EventStoreError/Code/corrupt`` when the record cannot be decoded.
    public func unregisteredProjections() throws -> [ProjectionRecord] {
        let registered = Set(store.configuration.projections.map(\.name))
        return try configurationRecord()?.projections.filter { !registered.contains($0.name) } ?? []
    }
}
