import Foundation
import Logging
public import PostgresNIO
public import SyncPostgres

/// The PostgreSQL server the tests use: `Tools/with-postgres.sh` (run by `Tools/test.sh`) starts
/// a throwaway one and exports its URL in `EVSTORE_TEST_POSTGRES_URL`.
///
/// Without it, PostgreSQL tests are skipped on a developer's machine; in CI (`CI=true`) they
/// run and fail, since a missing database there is a broken set-up, not a reason to test less.
public enum TestPostgres {
    /// The environment variable holding the server's URL.
    public static let environmentKey = "EVSTORE_TEST_POSTGRES_URL"

    /// The URL of the test database, if one was started.
    public static var url: String? {
        guard let url = ProcessInfo.processInfo.environment[environmentKey], !url.isEmpty else { return nil }
        return url
    }

    /// Whether PostgreSQL tests run: with a database, or in CI (where they fail without one).
    public static var isEnabled: Bool { url != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// A new, empty place on the test server: a schema of its own in the test database (each test
    /// gets one, so that tests run in parallel; the whole server is thrown away after the run).
    /// Requests may wait two minutes for the database, and each service opens at most 4 connections:
    /// the tests run many at once on a busy machine.
    ///
    /// - Throws: When no server was started (see ``environmentKey``).
    public static func freshDatabase() async throws -> PostgresBackend {
        guard let url else {
            throw TestPostgresError(
                "no PostgreSQL for the tests: run them with ./Tools/test.sh, which starts one, or set \(environmentKey)"
            )
        }
        var backend = try PostgresBackend(url: url)
        backend.schema = "t_" + String(UInt64.random(in: 0..<UInt64.max), radix: 36)
        // Generous: in the parallel suite, threads blocked by other tests can hold a request's
        // next step for a minute (a CI run saw one request to a fresh schema time out at 60 s).
        backend.requestTimeout = .seconds(120)
        // Hundreds of services run at once in the parallel suite: a few connections each.
        backend.maxConnections = 4
        return backend
    }

    /// `count` new, empty places (``freshDatabase()``): the databases of a partitioned deployment.
    public static func freshDatabases(_ count: Int) async throws -> [PostgresBackend] {
        var databases: [PostgresBackend] = []
        for _ in 0..<count { databases.append(try await freshDatabase()) }
        return databases
    }

    /// The connection URL of `backend` (as `evstore serve --postgres` takes it).
    public static func url(of backend: PostgresBackend) -> String {
        let password =
            backend.password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? $0) }
            ?? ""
        let schema = backend.schema.map { "&schema=\($0)" } ?? ""
        return "postgres://\(backend.username)\(password)@\(backend.host):\(backend.port)/\(backend.database)"
            + "?sslmode=\(backend.tls.rawValue)\(schema)&request_timeout=\(backend.requestTimeout.components.seconds)"
    }

    /// Runs `body` with a client on `backend`'s database and schema.
    @discardableResult
    public static func withAdminClient<T: Sendable>(
        _ backend: PostgresBackend, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        var configuration = PostgresClient.Configuration(
            host: backend.host, port: backend.port, username: backend.username, password: backend.password,
            database: backend.database, tls: .disable)
        if let schema = backend.schema { configuration.options.additionalStartupParameters = [("search_path", schema)] }
        let client = PostgresClient(
            configuration: configuration,
            backgroundLogger: Logger(label: "test-postgres", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

/// A test set-up problem with PostgreSQL.
public struct TestPostgresError: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String

    init(_ description: String) { self.description = description }
}
