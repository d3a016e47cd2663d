import EventSync
import Logging
import ServiceLifecycle
import SyncServer

/// A ``SyncServer`` on 127.0.0.1 with a system-chosen port, run in a service group until
/// ``stop()`` (graceful shutdown).
final class RunningServer: Sendable {
    let server: SyncServer
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(_ configuration: SyncServer.Configuration) async throws {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let group = ServiceGroup(services: [server], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        self.server = server
        self.group = group
        self.task = Task { try await group.run() }
        self.port = try await server.waitUntilRunning()
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
