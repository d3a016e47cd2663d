import LMDB

extension Store {
    /// Runs `body` with a consistent read-only view of the store.
    ///
    /// Reads never wait for writes. Copy out what you need: the reader is invalid afterwards.
    ///
    /// - Throws: what `body` throws; failures of the storage engine (a full readers table, an
    ///   I/O error) as ``EventStoreError/Code/storage``.
    public func read<T>(_ body: (StoreReader) throws -> T) throws -> T {
        do {
            return try environment.read { tx in try body(StoreReader(tx: tx, store: self)) }
        } catch {
            throw EventStoreError.wrapping(error, "read")
        }
    }

    /// The seq of the last event in the log.
    public func head() throws -> UInt64 { try read { try $0.head() } }

    /// The item, or `nil` when it does not exist.
    public func item(_ collection: String, _ id: String) throws -> Item? {
        try read { try $0.item(collection, id) }
    }

    /// The number of existing items in a collection.
    public func count(in collection: String) throws -> Int { try read { try $0.count(in: collection) } }
}
