import Foundation

/// File-system checks the store needs around LMDB.
struct FileManagerShim {
    /// Makes sure `path` is an empty directory, creating it when missing.
    func prepareEmptyDirectory(_ path: String) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw EventStoreError(.notADirectory, "\(path) is not a directory") }
            guard (try manager.contentsOfDirectory(atPath: path)).isEmpty else {
                throw EventStoreError(.invalidName, "\(path) is not empty")
            }
        } else {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
    }

    /// Removes what a failed copy left in `directory` (its data and lock files).
    func removeCopy(in directory: String) {
        for file in ["data.mdb", "lock.mdb"] { try? FileManager.default.removeItem(atPath: directory + "/" + file) }
    }
}
