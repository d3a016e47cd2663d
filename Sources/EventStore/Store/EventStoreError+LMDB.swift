import LMDB

extension EventStoreError {
    /// `error` as callers see it: an ``EventStoreError`` as is; a full disk as ``Code/diskFull``;
    /// another storage-engine error (I/O error, readers table full…) as ``Code/storage`` with a
    /// message saying what failed and the engine's error as the cause.
    static func wrapping(_ error: any Error, _ what: String) -> any Error {
        guard let error = error as? LMDBError else { return error }
        let hint: String
        switch error {
        case .noSpace: return EventStoreError(.diskFull, "\(what) failed: the disk is full", cause: error)
        case .mapFull: hint = ": the store reached the largest map size"
        case .readersFull: hint = ": too many concurrent readers (raise Configuration.maxReaders)"
        case .ioError: hint = ": the disk reported an I/O error"
        default: hint = ""
        }
        return EventStoreError(.storage, "\(what) failed\(hint)", cause: error)
    }

    init(openFailure error: LMDBError, path: String) {
        switch error {
        case .notDirectory: self.init(.notADirectory, "\(path) is not a directory", cause: error)
        case .invalid, .corrupted, .pageNotFound:
            self.init(.notAStore, "\(path) holds a file that is not an event store, or a damaged one", cause: error)
        case .versionMismatch:
            self.init(.unsupportedFormat, "\(path) was written by an incompatible storage version", cause: error)
        case .noSuchFile: self.init(.notFound, "no store at \(path)", cause: error)
        case .noSpace: self.init(.diskFull, "cannot open or create \(path): the disk is full", cause: error)
        case .incompatible:
            // The environment layer's answer when this process holds the path open read-only.
            self.init(
                .readOnly,
                "\(path) is already open read-only in this process: close that store and let go of every "
                    + "reference to it before opening it for writing",
                cause: error)
        case .permissionDenied, .operationNotPermitted:
            self.init(.permissionDenied, "cannot open \(path): permission denied", cause: error)
        default: self.init(.storage, "cannot open \(path): \(error.reason)", cause: error)
        }
    }
}
