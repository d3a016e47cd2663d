extension Store {
    /// What opening a store does when ``Configuration/indexes`` differ from the indexes the store
    /// records (its ``ConfigurationRecord``).
    ///
    /// Unlike a search configuration, an index changes no answer: it is derived from the items
    /// alone, and any process can maintain it (it is data, not code). So the default builds what
    /// is declared and keeps what is recorded: a tool or a sync server that opens the store
    /// without declaring the application's indexes still maintains them.
    ///
    /// ```swift
    /// var configuration = Store.Configuration()
    /// configuration.indexes = [IndexDefinition("tasks", fields: ["done", "due"])]
    /// // The first open with this index builds it from the items, in the open's transaction.
    /// let store = try Store.open(at: path, configuration: configuration)
    /// ```
    ///
    /// A read-only open never changes the store: it queries with the recorded indexes.
    public enum IndexChange: Sendable, Hashable, CaseIterable {
        /// Declared indexes the store lacks are built from its items when it opens (one pass over
        /// each collection concerned, in the open's write transaction) and recorded; recorded
        /// indexes that are not declared are kept and maintained. The default.
        case build
        /// Like ``build``, and recorded indexes that are not declared are dropped: the store's
        /// indexes become exactly ``Configuration/indexes``.
        case replace
        /// A writable open that declares an index the store lacks throws
        /// ``EventStoreError/Code/configurationMismatch`` naming it; recorded indexes are kept.
        case refuse
        /// The open ignores ``Configuration/indexes`` and uses the indexes the store records.
        case useStored
    }
}
