import EventStoreTestSupport
import EventSync
import EventSyncService
import SyncPostgres
import Testing

/// Connection URLs: what `evstore serve --postgres` accepts, and clear errors for the rest.
struct PostgresBackendTests {
    @Test func aURLGivesEveryPart() throws {
        let backend = try PostgresBackend(
            url: "postgres://evstore:s%40cret@db.internal:6543/sync?sslmode=require&schema=tenant_7&request_timeout=30")
        #expect(backend.host == "db.internal" && backend.port == 6543)
        #expect(backend.username == "evstore" && backend.password == "s@cret" && backend.database == "sync")
        #expect(backend.tls == .require && backend.schema == "tenant_7" && backend.requestTimeout == .seconds(30))
        #expect(backend.description == "postgres://evstore@db.internal:6543/sync?schema=tenant_7")
        let defaults = try PostgresBackend(url: "postgresql://me@localhost/db")
        #expect(defaults.port == 5432 && defaults.password == nil && defaults.tls == .prefer && defaults.schema == nil)
        #expect(defaults.requestTimeout == .seconds(10))
    }

    @Test(arguments: [
        ("http://me@host/db", "not a postgres:// URL"),
        ("postgres://host/db", "names no user"),
        ("postgres://me@host", "names no database"),
        ("postgres://me@host/", "names no database"),
        ("postgres://me@host/db?sslmode=maybe", "sslmode must be one of"),
        ("postgres://me@host/db?timeout=3", "unknown connection parameter"),
        ("postgres://me:secret@/db", "names no host"),
        ("postgres://me@host/db?schema=Bad-Name", "schema must be"),
        ("postgres://me@host/db?schema=1abc", "schema must be"),
        ("postgres://me@host/db?request_timeout=0", "request_timeout must be"),
    ])
    func aBadURLIsRefusedWithItsReason(url: String, reason: String) {
        do {
            _ = try PostgresBackend(url: url)
            Issue.record("\(url) was accepted")
        } catch {
            #expect("\(error)".contains(reason), "\(url): \(error)")
            #expect(!"\(error)".contains("secret"), "the error shows the password: \(error)")
        }
    }

    @Test func anUnreachableDatabaseIsUnavailableNotAnInternalError() async throws {
        // Port 1 on loopback: nothing listens there.
        var unreachable = PostgresBackend(host: "127.0.0.1", port: 1, username: "x", database: "x")
        unreachable.requestTimeout = .seconds(1)
        let service = try SyncService(configuration: .init(backend: .postgres(unreachable)))
        defer { service.close() }
        for _ in 0..<2 {
            let (waited, lateness) = try await measuringTimerLateness {
                do {
                    _ = try await service.info(store: "notes")
                    Issue.record("a request to an unreachable database succeeded")
                } catch let error as SyncError {
                    #expect(error.code == .unavailable, "\(error)")
                }
            }
            // The answer comes at the request timeout (1 s), not when the connection attempts
            // give up (they went on for 60–90 s), however late a loaded machine runs timers (24
            // and 46 s were seen in the parallel suite).
            #expect(waited < .seconds(30) + lateness, "the request waited \(waited), timers ran \(lateness) late")
        }
    }
}
