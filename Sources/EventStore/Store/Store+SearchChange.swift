extension Store {
    /// What opening a store does when ``Configuration/search`` indexes differently from the
    /// search configuration the store records (its ``ConfigurationRecord``).
    ///
    /// A store's search index is built with one search configuration; items indexed with other
    /// fields or weights would be found by other rules than the ones before them. So a change is
    /// never silent: by default the open fails, and an application that changes its search fields
    /// declares it.
    ///
    /// ```swift
    /// var configuration = Store.Configuration()
    /// configuration.search.collections["tasks"] = [.init(name: "title", weight: 3), .init(name: "notes", weight: 1)]
    /// configuration.searchChange = .reindex   // this release changes the fields: re-index once
    /// let store = try Store.open(at: path, configuration: configuration)
    /// ```
    ///
    /// Field order does not count as a difference (see ``SearchConfiguration/canonical``). A
    /// change of the library's tokenizer is not the application's to declare: a writable open
    /// records it and rebuilds whatever ``Configuration/searchChange`` says. A read-only open
    /// never changes the store: it always searches, verifies and replays with the recorded
    /// configuration (the index was built with it).
    public enum SearchChange: Sendable, Hashable, CaseIterable {
        /// A writable open with another search configuration throws
        /// ``EventStoreError/Code/configurationMismatch``, naming what differs. The default.
        case refuse
        /// A writable open with another search configuration records it and rebuilds every
        /// projection from the log (``Store/rebuildProjections(progress:)``) before it returns.
        /// The rebuild is marked in the same commit as the new record, so an interrupted one
        /// runs again on the next writable open.
        case reindex
        /// The open ignores ``Configuration/search`` and uses the configuration the store records
        /// (tools, inspection, processes that do not own the store's schema). Custom projections
        /// the store records but this open does not register are left to their owner: a writable
        /// open marks them stale (``ProjectionRecord/isStale``), so that the owner's next open
        /// rebuilds them. For a store without a record (made by an older version) the open uses
        /// ``Configuration/search`` as given and records nothing.
        case useStored
    }
}
