public import EventStore
import Foundation

/// Opening stores for the tool: read-only for inspection, writable for changes, with one clear
/// line when the path is missing, not a store, or damaged.
public enum StoreAccess {
    /// Opens an existing store read-only (works while another process writes it).
    public static func openReadOnly(_ path: String) throws -> Store {
        try open(path, readOnly: true)
    }

    /// Opens a store for writing; `create` allows a new one.
    public static func openWritable(_ path: String, create: Bool = false) throws -> Store {
        try open(path, readOnly: false, create: create)
    }

    static func open(_ path: String, readOnly: Bool, create: Bool = false) throws -> Store {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if !exists && !create { throw ToolError("no store at \(path)") }
        if exists && !isDirectory.boolValue { throw ToolError("\(path) is not a directory, so not a store") }
        if exists && !create && !FileManager.default.fileExists(atPath: path + "/data.mdb") {
            throw ToolError("\(path) is not a store (no data.mdb)")
        }
        var configuration = Store.Configuration()
        configuration.readOnly = readOnly
        do {
            return try Store.open(at: path, configuration: configuration)
        } catch let error as EventStoreError {
            throw ToolError("cannot open \(path): \(error.message)")
        }
    }

    /// Resolves an item argument: `collection/id`, or an id with `--collection`, or an id that
    /// exists in exactly one collection.
    public static func resolveItem(_ item: String, collection: String?, in store: Store) throws -> (String, String) {
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
