import EventStore
import EventSync
import Foundation

/// Profiling knobs of the `sync` scenario, read from the environment (the client process
/// inherits them from the server process). Unset, the scenario runs the defaults an application
/// gets; set, the report names them, so that such figures are never taken for the defaults.
///
/// - `EVSTORE_BENCH_SYNC_DURABILITY=durable|relaxed|bulk`: the client store's durability.
/// - `EVSTORE_BENCH_SYNC_SEARCH=0`: no search index on the client (no searchable field).
/// - `EVSTORE_BENCH_SYNC_PAGE=N`: events per pulled page (the server's page limits are raised
///   to allow it; default 1,000).
/// - `EVSTORE_BENCH_SYNC_COMMIT_BYTES=N`: the client's catch-up byte budget per commit
///   (`Synchronizer.Configuration.pullBytesPerCommit`).
struct SyncTuning: Sendable {
    var durability: Store.Durability?
    var search = true
    var pageEvents: Int?
    var commitBytes: Int?

    /// The knobs set in this process's environment.
    static let current: SyncTuning = {
        let environment = ProcessInfo.processInfo.environment
        var tuning = SyncTuning()
        tuning.durability = environment["EVSTORE_BENCH_SYNC_DURABILITY"].flatMap(Store.Durability.init(rawValue:))
        tuning.search = environment["EVSTORE_BENCH_SYNC_SEARCH"] != "0"
        tuning.pageEvents = environment["EVSTORE_BENCH_SYNC_PAGE"].flatMap { Int($0) }.map { max(1, $0) }
        tuning.commitBytes = environment["EVSTORE_BENCH_SYNC_COMMIT_BYTES"].flatMap { Int($0) }.map { max(1, $0) }
        return tuning
    }()

    /// The knobs that differ from the defaults, for the report (`nil`: none).
    var description: String? {
        var parts: [String] = []
        if let durability { parts.append("client durability \(durability.rawValue)") }
        if !search { parts.append("no search index on the client") }
        if let pageEvents { parts.append("\(pageEvents) events per pulled page") }
        if let commitBytes { parts.append("\(commitBytes) bytes of events per catch-up commit") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// The client store's configuration: the defaults, changed by the knobs.
    var clientStoreConfiguration: Store.Configuration {
        var configuration = Store.Configuration()
        if let durability { configuration.durability = durability }
        if !search { configuration.search.defaultFields = [] }
        return configuration
    }

    /// The synchronizer's configuration: the defaults, or the page size and budget of the knobs.
    var synchronizerConfiguration: Synchronizer.Configuration {
        var configuration = Synchronizer.Configuration()
        if let pageEvents { configuration.pullPageSize = pageEvents }
        if let commitBytes { configuration.pullBytesPerCommit = commitBytes }
        return configuration
    }

    /// The server's limits: the defaults, or pages large enough for the knob's page size.
    var serverLimits: SyncLimits {
        var limits = SyncLimits()
        if let pageEvents, pageEvents > limits.maxPageEvents {
            limits.maxPageEvents = pageEvents
            limits.maxPageBytes = max(limits.maxPageBytes, pageEvents * 4096)
        }
        return limits
    }
}
