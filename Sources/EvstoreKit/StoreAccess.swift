public import EventStore
import Foundation

/// Opening stores for the tool: read-only for inspection, writable for changes, with one clear
/// line when the path is missing, not a store, or damaged.
public enum StoreAccess {
    /// Opens an existing store read-only.
    ///
    /// LMDB gives each reader a consistent snapshot, so this works while another process writes
    /// the store; the tool never takes the writer lock.
    ///
    /// - Throws: ``ToolError`` (exit status 1) when there is no store at `path`, `path` is not a
    ///   store, or the store cannot be opened.
    public static func openReadOnly(_ path: String) throws -> Store {
        try open(path, readOnly: true)
    }

    /// Opens a store for writing; `create` allows a new one (a missing or empty directory).
    public static func openWritable(_ path: String, create: Bool = false) throws -> Store {
        try open(path, readOnly: false, create: create)
    }

    static func open(_ path: String, readOnly: Bool, create: Bool = false) throws -> Store {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = manager.fileExists(atPath: path, isDirectory: &isDirectory)
        if !exists && !create { throw ToolError("no store at \(path)") }
        if exists && !isDirectory.boolValue { throw ToolError("\(path) is a file, not a store (a store is a directory)") }
        let hasData = manager.fileExists(atPath: path + "/data.mdb")
        if exists && !hasData {
            let empty = (try? manager.contentsOfDirectory(atPath: path))?.isEmpty ?? false
            if !create || !empty { throw ToolError("\(path) is not a store (it has no data.mdb)") }
        }
        if hasData && !manager.isReadableFile(atPath: path + "/data.mdb") {
            throw ToolError("cannot read \(path)/data.mdb: permission denied")
        }
        var configuration = Store.Configuration()
        configuration.readOnly = readOnly
        CrashGuard.setContext(path)
        do {
            return try Store.open(at: path, configuration: configuration)
        } catch let error as EventStoreError {
            throw ToolError("cannot open \(path): \(error.message)")
        } catch {
            throw ToolError("cannot open \(path): \(error)")
        }
    }

    /// Resolves an item argument: `collection/id`, or an id with `--collection`, or an id that
    /// exists in exactly one collection.
    ///
    /// - Throws: ``ToolError`` when no collection has the item, or a usage error (exit status
    ///   64) when several do and `--collection` is needed.
    public static func resolveItem(_ item: String, collection: String?, in store: Store) throws -> (
        collection: String, id: String
    ) {
        if let collection { return (collection, item) }
        let collections = try store.read { try $0.collections() }
        if let slash = item.firstIndex(of: "/"), collections.contains(String(item[..<slash])) {
            return (String(item[..<slash]), String(item[item.index(after: slash)...]))
        }
        let matches = try store.read { reader in
            try collections.filter { !(try reader.events(collection: $0, item: item).isEmpty) }
        }
        guard let first = matches.first else { throw ToolError("no item \(item) in \(store.path)") }
        guard matches.count == 1 else {
            throw ToolError.usage("item \(item) exists in \(matches.joined(separator: ", ")): give --collection")
        }
        return (first, item)
    }
}
