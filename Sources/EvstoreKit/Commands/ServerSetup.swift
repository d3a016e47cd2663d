import EventStore
package import EventSyncService
package import SyncPostgres
package import SyncServer

/// `evstore serve`: the sync server's configuration from the command line, checked before the
/// server starts, so that a mistake stops it with a message instead of starting a server that
/// listens elsewhere or that no client can use.
///
/// ```swift
/// let configuration = try ServerSetup.configuration(
///     dataDirectory: "./server-data", postgres: nil, host: "127.0.0.1", port: 8080, tokensFile: "tokens.txt")
/// ```
package enum ServerSetup {
    /// The ports `--port` accepts: 1…65535, and 0 for any free port.
    package static let validPorts = 0...65535

    /// What is wrong with `port`, or `nil` when it is in ``validPorts``.
    ///
    /// A port beyond 65535 would otherwise be cut to 16 bits (70000 listens on 4464).
    package static func portProblem(_ port: Int) -> String? {
        validPorts.contains(port) ? nil : "--port must be from 1 to 65535 (or 0 for any free port), not \(port)"
    }

    /// Reads the tokens file and makes the server's configuration.
    ///
    /// - Parameters:
    ///   - dataDirectory: The directory holding one store per subdirectory (the LMDB backend).
    ///   - postgres: PostgreSQL URLs (the PostgreSQL backend; several spread the stores over
    ///     several databases); exactly one of `dataDirectory` and `postgres` is given.
    ///   - host: The address to listen on.
    ///   - port: The port, in ``validPorts``.
    ///   - tokensFile: The tokens file (see ``SyncServer/TokenTable``).
    /// - Returns: The configuration to run a ``SyncServer/SyncServer`` with.
    /// - Throws: ``ToolError``: exit status 1 when the tokens file cannot be read or parsed; a
    ///   usage error (exit status 64) for a port outside ``validPorts``, a tokens file that
    ///   grants nothing (only comments and blank lines), since no client could use that server,
    ///   both or neither of `dataDirectory` and `postgres`, or a PostgreSQL URL that cannot be used.
    package static func configuration(
        dataDirectory: String?, postgres: [String], host: String, port: Int, tokensFile: String
    ) throws -> SyncServer.Configuration {
        if let problem = portProblem(port) { throw ToolError.usage(problem) }
        let backend = try backend(dataDirectory: dataDirectory, postgres: postgres)
        let tokens: TokenTable
        do {
            tokens = try TokenTable(contentsOfFile: tokensFile)
        } catch {
            throw ToolError("cannot read the tokens file \(tokensFile): \(error)")
        }
        guard tokens.count > 0 else {
            throw ToolError.usage(
                "the tokens file \(tokensFile) grants no store to any token, so no client could use the server: "
                    + "add a line `TOKEN STORE…` (or `TOKEN *` for every store)")
        }
        var configuration = SyncServer.Configuration(backend: backend, host: host, port: port, tokens: tokens)
        // Serve each store with the search configuration it records.
        configuration.storeConfiguration.searchChange = .useStored
        return configuration
    }

    /// The backend that `--data` or `--postgres` names.
    ///
    /// - Throws: A usage error for both, neither, or an unusable PostgreSQL URL.
    package static func backend(dataDirectory: String?, postgres: [String]) throws -> SyncBackend {
        switch (dataDirectory, postgres.isEmpty) {
        case (let directory?, true):
            return .lmdb(dataDirectory: directory)
        case (nil, false):
            return .postgres(partitions: try postgresBackends(postgres))
        case (.some, false):
            throw ToolError.usage("give either --data DIR (stores on this machine) or --postgres URL, not both")
        case (nil, true):
            throw ToolError.usage(
                "give --data DIR (stores on this machine) or --postgres URL (a shared PostgreSQL database)")
        }
    }

    /// The databases that `--postgres` names, each once.
    ///
    /// - Throws: A usage error for an unusable URL, or one given twice.
    package static func postgresBackends(_ urls: [String]) throws -> [PostgresBackend] {
        var seen: Set<String> = []
        return try urls.map { url in
            let backend: PostgresBackend
            do {
                backend = try PostgresBackend(url: url)
            } catch {
                throw ToolError.usage("--postgres: \(error)")
            }
            guard seen.insert(backend.description).inserted else {
                throw ToolError.usage("--postgres: \(backend) is given twice")
            }
            return backend
        }
    }
}
