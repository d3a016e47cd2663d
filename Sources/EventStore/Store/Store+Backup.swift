import LMDB

extension Store {
    /// Writes a compacted, consistent copy of the store into `destination`, which must not exist
    /// or be an empty directory.
    ///
    /// The copy is taken from one read snapshot, so it runs alongside writers (in this process
    /// or another) and holds every event committed before it started. Free pages are left out.
    /// The copy is an ordinary store: open it with ``Store/open(at:configuration:)``.
    ///
    /// ```swift
    /// try store.backup(to: "/backups/notes-2026-11-22")
    /// ```
    ///
    /// - Parameter destination: A directory that does not exist yet or is empty.
    /// - Throws: ``EventStoreError`` with code ``EventStoreError/Code/notADirectory`` when
    ///   `destination` is a file, ``EventStoreError/Code/invalidName`` when it is not empty,
    ///   ``EventStoreError/Code/diskFull`` when its disk fills up, and
    ///   ``EventStoreError/Code/storage`` when the copy fails otherwise. A failed copy leaves no
    ///   file behind (a partial one would not open), so the same destination can be used again.
    public func backup(to destination: String) throws {
        let manager = FileManagerShim()
        try manager.prepareEmptyDirectory(destination)
        do {
            try environment.copy(to: destination, compact: true)
        } catch {
            manager.removeCopy(in: destination)
            if let error = error as? LMDBError, error == .noSpace {
                throw EventStoreError(.diskFull, "cannot back up to \(destination): the disk is full", cause: error)
            }
            throw EventStoreError(.storage, "cannot back up to \(destination)", cause: error)
        }
    }
}
