import LMDB

extension Store {
    /// Whether the store at `path` records its configuration (``ConfigurationRecord``), read
    /// from its metadata without opening it as a store: no format upgrade, no rebuild, nothing
    /// written. `nil` when it cannot tell (no store there, or one it cannot read).
    ///
    /// A tool that writes (`evstore rebuild`, `import`, `index`, `sync`) checks it first: on a
    /// store that records no configuration it would index with the default search fields.
    package static func recordsConfiguration(at path: String) -> Bool? {
        var options = Environment.Configuration()
        options.readOnly = true
        options.createsDirectory = false
        guard let environment = try? Environment.open(path: path, configuration: options) else { return nil }
        return try? environment.openDatabases { tx in
            let meta = try tx.openDatabase(named: "meta")
            return try Array(Meta.configuration.utf8).withUnsafeBytes { try tx.value(forKey: $0, in: meta) != nil }
        }
    }
}
