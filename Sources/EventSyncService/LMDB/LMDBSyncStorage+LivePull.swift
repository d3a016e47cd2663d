import EventStore

extension LMDBSyncStorage {
    /// Waits until `store` holds an event after `after`, at most `timeout`: returns at once when
    /// it already does, and early when the task is cancelled (a server shutting down answers its
    /// waiting pulls with what it has) or the store closes.
    ///
    /// The wait follows the store's commit notification, so a push answers every pull waiting on
    /// its store as soon as it commits.
    static func waitForEvents(in store: Store, after: UInt64, upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var changes = store.changes(after: after).makeAsyncIterator()
                _ = try? await changes.next()
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
