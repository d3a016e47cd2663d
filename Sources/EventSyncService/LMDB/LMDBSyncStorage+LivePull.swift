import EventStore

extension LMDBSyncStorage {
    /// Waits until `store` holds an event after the request's `after`, at most its wait: returns at
    /// once when it already does, and early when the service ends its live waits (a server
    /// shutting down answers its waiting pulls with what it has), the task is cancelled or the
    /// store closes.
    ///
    /// The wait follows the store's commit notification, so a push answers every pull waiting on
    /// its store as soon as it commits.
    static func waitForEvents(in store: Store, for request: PageRequest) async {
        await request.liveWaits.wait(upTo: request.wait) {
            var changes = store.changes(after: request.after).makeAsyncIterator()
            _ = try? await changes.next()
        }
    }
}
