import EventStore
import EventSync

extension Dump {
    /// Prints the log (`--events`) or the sync state (`--meta`) of a store the sync server keeps
    /// in PostgreSQL (see ``ServerStoreAccess``).
    ///
    /// - Throws: ``ToolError/usage(_:)`` for a section the backend cannot answer (it keeps no
    ///   items, search index or conflicts) or a filter the section ignores; ``ToolError`` when
    ///   the store cannot be read.
    package func run(server: ServerStoreAccess, output: Output) async throws {
        try checkFilters()
        switch section {
        case .events:
            var rows = EventRows(self, item: try serverItem())
            var going = true
            try await server.forEachPage(after: from - 1) { page in
                for event in page.events where event.seq <= to {
                    going = rows.emit(event, output)
                    if !going { break }
                }
                return going && page.next < to
            }
            rows.finish(output)
        case .meta:
            let info = try await server.info()
            let entries = [
                MetaEntry(
                    database: "server", key: "store", value: .string(info.store), text: info.store,
                    about: "the store's name on the server"),
                MetaEntry(
                    database: "server", key: "head", value: .int(Int64(clamping: info.head)), text: "\(info.head)",
                    about: "the seq of the last event in the server's log"),
                MetaEntry(
                    database: "server", key: "epoch", value: .string(info.epoch), text: info.epoch,
                    about: "the store's epoch (changes when a restore is detected)"),
                MetaEntry(
                    database: "server", key: "digest", value: .string(info.digest.description),
                    text: info.digest.description,
                    about: "the log digest at the head (what clients' continuity checks compare)"),
            ].prefix(limit)
            switch format {
            case .jsonl: for entry in entries { output.line(entry.jsonLine) }
            case .table:
                var table = Table(columns: ["database", "key", "value", "meaning"])
                for entry in entries { table.add([entry.database, entry.key, entry.text, entry.about]) }
                table.render().forEach(output.line)
            }
        case .items, .terms, .conflicts:
            throw ToolError.usage(
                "--\(section.rawValue) needs items and a search index, which the PostgreSQL backend does not keep: "
                    + "dump --events or --meta, or pull the store into a local one with `evstore sync`")
        }
    }

    /// The `--item` filter without a store to resolve it: `COLLECTION/ID`, or `ID` with `--collection`.
    private func serverItem() throws -> (collection: String, id: String)? {
        guard let item else { return nil }
        if let collection { return (collection, item) }
        guard let slash = item.firstIndex(of: "/") else {
            throw ToolError.usage("--item \(item.debugDescription): give COLLECTION/ID, or --collection with it")
        }
        return (String(item[..<slash]), String(item[item.index(after: slash)...]))
    }
}
