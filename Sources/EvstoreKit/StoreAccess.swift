package import EventStore
import Foundation

/// Opening stores for the tool: read-only for inspection, writable for changes, with one clear
/// line when the path is missing, not a store, or damaged.
package enum StoreAccess {
    /// Opens an existing store read-only, creating nothing, with the configuration it records
    /// (``EventStore/Store/SearchChange/useStored``).
    ///
    /// LMDB gives each reader a consistent snapshot, so this works while another process writes
    /// the store; the tool never takes the writer lock. A store whose directory this user may not
    /// write (another user's, a read-only mount) is read without its lock file, with a note on
    /// standard error: such a read is reliable only while no process writes the store.
    ///
    /// - Throws: ``ToolError`` (exit status 1) when there is no store at `path` (a missing path,
    ///   or a directory without `data.mdb`), `path` is not a store, or the store cannot be opened
    ///   (the message keeps the reason, such as `permission denied`).
    package static func openReadOnly(_ path: String) throws -> Store {
        let store = try open(path, readOnly: true)
        if !store.usesLockFile {
            FileHandle.standardError.write(
                Data(
                    ("evstore: note: \(path) is not writable, so it is read without its lock file; "
                        + "the results are reliable only while no process writes the store\n").utf8))
        }
        return store
    }

    /// Opens a store for writing; `create` allows a new one (a missing or empty directory).
    ///
    /// Like ``openReadOnly(_:)``, it uses the configuration the store records
    /// (``EventStore/Store/SearchChange/useStored``): a rebuild indexes the fields the store was
    /// built with, and custom projections the tool cannot run are marked stale for the
    /// application to rebuild (see ``EventStore/ProjectionRecord/isStale``).
    ///
    /// `indexes` are declared in addition to the ones the store records, and built from its items
    /// when they are new (``EventStore/Store/IndexChange/build``).
    package static func openWritable(_ path: String, create: Bool = false, indexes: [IndexDefinition] = []) throws
        -> Store
    {
        // A store that records no configuration is refused before a writable open could upgrade
        // its format or rebuild it with the default search fields (its metadata is read without
        // opening it as a store).
        if FileManager.default.fileExists(atPath: path + "/data.mdb"), Store.recordsConfiguration(at: path) == false {
            throw noRecord(path)
        }
        return try open(path, readOnly: false, create: create, indexes: indexes)
    }

    /// The refusal of a writable open of a store that records no configuration.
    private static func noRecord(_ path: String) -> ToolError {
        ToolError(
            "\(path) records no configuration yet (it was made by an older version), so evstore cannot know its "
                + "search fields: open it with the application once (which records them), then run this again")
    }

    static func open(_ path: String, readOnly: Bool, create: Bool = false, indexes: [IndexDefinition] = []) throws
        -> Store
    {
        // Checked before anything is opened, so that no lock file is ever left where there is no
        // store, and each failure says which one it is.
        switch PathState(path) {
        case .denied: throw ToolError("cannot open \(path): permission denied")
        case .missing: if !create { throw ToolError("no store at \(path)") }
        case .file: throw ToolError("\(path) is a file, not a store (a store is a directory)")
        case .directory:
            switch PathState(path + "/data.mdb") {
            case .denied: throw ToolError("cannot open \(path): permission denied")
            case .missing:
                if readOnly { throw ToolError("no store at \(path) (the directory has no data.mdb)") }
                let empty = (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty ?? false
                if !create || !empty { throw ToolError("\(path) is not a store (it has no data.mdb)") }
            case .file, .directory:
                if !FileManager.default.isReadableFile(atPath: path + "/data.mdb") {
                    throw ToolError("cannot read \(path)/data.mdb: permission denied")
                }
            }
        }
        var configuration = Store.Configuration()
        configuration.readOnly = readOnly
        // The store's own search configuration, whatever this process's defaults are.
        configuration.searchChange = .useStored
        configuration.indexes = indexes
        CrashGuard.setContext(path)
        do {
            let store = try Store.open(at: path, configuration: configuration)
            if try store.read({ try $0.configurationRecord() }) == nil {
                guard readOnly else {
                    // Writing now would index with the default search fields, and the
                    // application's next open would record its own fields over that index.
                    store.close()
                    throw noRecord(path)
                }
                FileHandle.standardError.write(
                    Data(
                        ("evstore: note: \(path) records no configuration (it was made by an older version): the default "
                            + "search fields are used; the application's next writable open records its own\n").utf8))
            }
            return store
        } catch let error as EventStoreError {
            // Errors from opening name the path already ("no store at …", "cannot open …: permission
            // denied"); others ("the store's metadata has no format version") get it here.
            throw ToolError(error.message.contains(path) ? error.message : "cannot open \(path): \(error.message)")
        } catch {
            throw ToolError("cannot open \(path): \(error)")
        }
    }

    /// Resolves an item argument: `collection/id`, or an id with `--collection`, or an id that
    /// exists in exactly one collection.
    ///
    /// - Throws: ``ToolError`` when no collection has the item, or a usage error (exit status
    ///   64) when several do and `--collection` is needed.
    package static func resolveItem(_ item: String, collection: String?, in store: Store) throws -> (
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

/// What the file system says of a path.
private enum PathState {
    case missing, denied, directory, file

    init(_ path: String) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            self = isDirectory.boolValue ? .directory : .file
        } else {
            // Not found either because it is missing or because a parent may not be searched.
            // (`stat`'s struct is avoided: which C module defines it depends on import order.)
            self = access(path, F_OK) != 0 && errno == EACCES ? .denied : .missing
        }
    }
}
