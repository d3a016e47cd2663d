import SyncServer

/// Sync servers running in this process, each on its own free port of 127.0.0.1, until
/// ``stop()``.
struct RunningServers {
    /// The servers' base URLs, in the order of their configurations.
    let urls: [String]
    private let tasks: [Task<Void, any Error>]

    /// Starts one server per configuration and waits until each listens.
    ///
    /// - Throws: The error that stopped a server before it could listen (the others are stopped).
    init(_ configurations: [SyncServer.Configuration]) throws {
        var tasks: [Task<Void, any Error>] = []
        var urls: [String] = []
        for configuration in configurations {
            let server = SyncServer(configuration: configuration)
            tasks.append(Task.detached { try await server.run() })
            do {
                let port = try runBlocking { try await server.waitUntilRunning() }
                urls.append("http://127.0.0.1:\(port)")
            } catch {
                RunningServers.stop(tasks)
                throw error
            }
        }
        self.urls = urls
        self.tasks = tasks
    }

    /// Stops every server and waits until each has closed its stores.
    func stop() { RunningServers.stop(tasks) }

    private static func stop(_ tasks: [Task<Void, any Error>]) {
        for task in tasks { task.cancel() }
        for task in tasks { _ = try? runBlocking { try await task.value } }
    }
}
