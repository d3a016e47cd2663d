package import EventStore

extension Inspect {
    /// What `evstore rebuild` did.
    package struct Rebuild: Sendable, Hashable {
        /// The events the projections were rebuilt from.
        package var events: UInt64
        /// Custom projections the store records that the tool cannot run: not rebuilt here, and
        /// marked stale so that the application's next open rebuilds them.
        package var skippedProjections: [ProjectionRecord]
    }

    /// Rebuilds a store's projections with the configuration it records (see
    /// ``StoreAccess/openWritable(_:create:)``).
    ///
    /// Custom projections the store records but this process does not register cannot be
    /// rebuilt here. Their data is left to the application: the rebuild's last commit marks them
    /// stale (``EventStore/ProjectionRecord/isStale``), and the application's next open rebuilds
    /// them.
    package static func rebuild(store: Store, progress: (@Sendable (Store.Progress) -> Void)? = nil) async throws
        -> Rebuild
    {
        try await store.rebuildProjections(progress: progress)
        let (head, skipped) = try store.read { reader in (try reader.head(), try reader.unregisteredProjections()) }
        return Rebuild(events: head, skippedProjections: skipped)
    }

    /// Prints what a rebuild did: `rebuilt the projections from N events`, then one line per
    /// skipped custom projection.
    package static func printRebuild(_ rebuild: Rebuild, output: Output) {
        output.line("rebuilt the projections from \(rebuild.events) events")
        for projection in rebuild.skippedProjections {
            output.line("\(skippedLine(projection)); the application rebuilds it when it next opens the store")
        }
    }

    /// `skipped custom projection NAME (version V): not registered in evstore`.
    static func skippedLine(_ projection: ProjectionRecord) -> String {
        "skipped custom projection \(projection.name) (version \(projection.version)): not registered in evstore"
    }
}
