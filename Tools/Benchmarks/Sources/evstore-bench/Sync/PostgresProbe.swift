import Foundation
import PostgresNIO
import SyncPostgres

/// What scenario 10 reads from the PostgreSQL server itself: how much the database grew, and
/// the CPU time of the server's processes, which run outside the benchmark's processes.
///
/// The CPU time is the postmaster's and its children's, from `/proc` (user + system, the
/// children that exited included through the postmaster's `cutime`/`cstime`); it needs a role
/// that may read `data_directory` (a superuser, as in the throwaway server) and a user that may
/// read `postmaster.pid` there (root can), to find the postmaster; otherwise the figure is left
/// out. Only an unencrypted connection (`sslmode=disable`) is probed.
final class PostgresProbe: Sendable {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let postmaster: Int32?

    private init(client: PostgresClient, runner: Task<Void, Never>, postmaster: Int32?) {
        self.client = client
        self.runner = runner
        self.postmaster = postmaster
    }

    /// Connects to `database`; `nil` when it asks for TLS.
    static func open(_ database: PostgresBackend) -> PostgresProbe? {
        guard database.tls == .disable else { return nil }
        let client = PostgresClient(
            configuration: .init(
                host: database.host, port: database.port, username: database.username, password: database.password,
                database: database.database, tls: .disable))
        let runner = Task { await client.run() }
        // `data_directory` is shown to superusers (and pg_read_all_settings) only: without it, no
        // CPU figure. A connection that fails shows in the first query the run makes.
        let directory = try? runBlocking { try await show("data_directory", on: client) }
        let pid = directory.flatMap { try? String(contentsOfFile: $0 + "/postmaster.pid", encoding: .utf8) }?
            .split(separator: "\n").first.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        return PostgresProbe(client: client, runner: runner, postmaster: pid)
    }

    /// The server's version and the settings that make commits durable, by name.
    func settings() throws -> [String: String] {
        let client = client
        return try runBlocking {
            var settings: [String: String] = [:]
            for name in ["server_version", "fsync", "synchronous_commit"] {
                settings[name] = try await PostgresProbe.show(name, on: client)
            }
            return settings
        }
    }

    /// `SHOW name` (`name` is one of ours, never input).
    private static func show(_ name: String, on client: PostgresClient) async throws -> String {
        var value = ""
        for try await text in try await client.query(PostgresQuery(unsafeSQL: "SHOW \(name)")).decode(String.self) {
            value = text
        }
        return value
    }

    /// The size of the database, in bytes (`pg_database_size`).
    func databaseBytes() throws -> Double {
        let client = client
        return try runBlocking {
            var bytes: Int64 = 0
            let rows = try await client.query("SELECT pg_database_size(current_database())")
            for try await value in rows.decode(Int64.self) { bytes = value }
            return Double(bytes)
        }
    }

    /// The CPU time the server's processes have used so far, in seconds (`nil`: unknown).
    func cpuSeconds() -> Double? {
        guard let postmaster, let own = ProcStat(pid: postmaster) else { return nil }
        var ticks = own.ticks + own.childTicks
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for name in processes {
            guard let pid = Int32(name), pid != postmaster, let stat = ProcStat(pid: pid), stat.parent == postmaster
            else { continue }
            ticks += stat.ticks
        }
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Closes the connections.
    func close() { runner.cancel() }
}

/// The fields of `/proc/PID/stat` the probe reads.
private struct ProcStat {
    /// The parent's process id.
    var parent: Int32
    /// User plus system time, in clock ticks.
    var ticks: UInt64
    /// User plus system time of the children it has waited for, in clock ticks.
    var childTicks: UInt64

    init?(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm) ": state, ppid, …; utime, stime, cutime, cstime are fields 14–17.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let parent = Int32(fields[1]) else { return nil }
        let numbers = fields[11...14].map { UInt64($0) ?? 0 }
        self.parent = parent
        self.ticks = numbers[0] + numbers[1]
        self.childTicks = numbers[2] + numbers[3]
    }
}
