import CoreMetrics
import Prometheus

/// The sync server's metrics, kept in a Prometheus registry of its own and served at `GET /metrics`.
///
/// Each ``SyncServer`` owns one: the metrics go through the swift-metrics API with a
/// `PrometheusMetricsFactory` passed explicitly, never through the global `MetricsSystem`, so
/// that several servers in one process (tests, or an app running more than one) keep apart.
///
/// The names, labels and meanings are listed in the *Deploying the sync server* article:
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `evstore_http_requests_total` | counter | `route` (the template), `method`, `status` |
/// | `evstore_push_duration_seconds` | histogram | |
/// | `evstore_pull_duration_seconds` | histogram | `live` (`true` for `wait>0`) |
/// | `evstore_events_pushed_total` | counter | `result` (`accepted`, `duplicate`) |
/// | `evstore_events_pulled_total` | counter | |
/// | `evstore_open_long_polls` | gauge | |
/// | `evstore_store_head` | gauge | `store` |
final class SyncMetrics: Sendable {
    /// The metric names.
    enum Name {
        static let requests = "evstore_http_requests_total"
        static let pushDuration = "evstore_push_duration_seconds"
        static let pullDuration = "evstore_pull_duration_seconds"
        static let eventsPushed = "evstore_events_pushed_total"
        static let eventsPulled = "evstore_events_pulled_total"
        static let openLongPolls = "evstore_open_long_polls"
        static let storeHead = "evstore_store_head"
    }

    /// The latency buckets, from 1 ms to 30 s: a live pull may wait 25 s before it answers.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(20), .seconds(30),
    ]

    /// The registry `GET /metrics` renders.
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let pushDuration: CoreMetrics.Timer
    private let pullDuration: CoreMetrics.Timer
    private let livePullDuration: CoreMetrics.Timer
    private let acceptedEvents: CoreMetrics.Counter
    private let duplicateEvents: CoreMetrics.Counter
    private let pulledEvents: CoreMetrics.Counter
    private let openLongPolls: CoreMetrics.Meter

    /// Creates the metrics, every series without a per-request label already at zero.
    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            Name.pushDuration: SyncMetrics.durationBuckets, Name.pullDuration: SyncMetrics.durationBuckets,
        ]
        self.factory = factory
        pushDuration = Timer(label: Name.pushDuration, factory: factory)
        pullDuration = Timer(label: Name.pullDuration, dimensions: [("live", "false")], factory: factory)
        livePullDuration = Timer(label: Name.pullDuration, dimensions: [("live", "true")], factory: factory)
        acceptedEvents = CoreMetrics.Counter(
            label: Name.eventsPushed, dimensions: [("result", "accepted")], factory: factory)
        duplicateEvents = CoreMetrics.Counter(
            label: Name.eventsPushed, dimensions: [("result", "duplicate")], factory: factory)
        pulledEvents = CoreMetrics.Counter(label: Name.eventsPulled, factory: factory)
        openLongPolls = CoreMetrics.Meter(label: Name.openLongPolls, factory: factory)
    }

    /// The metrics in the Prometheus text format (version 0.0.4).
    func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    /// Counts an answered request under its route template (never the raw path), method and status.
    func countRequest(route: String, method: String, status: Int) {
        let labels = [("route", route), ("method", method), ("status", "\(status)")]
        CoreMetrics.Counter(label: Name.requests, dimensions: labels, factory: factory).increment()
    }

    /// Records an answered push: its latency, its events and the store's new head.
    func recordPush(store: String, accepted: Int, duplicates: Int, head: UInt64, duration: Duration) {
        pushDuration.recordNanoseconds(SyncMetrics.nanoseconds(duration))
        acceptedEvents.increment(by: accepted)
        duplicateEvents.increment(by: duplicates)
        recordHead(head, of: store)
    }

    /// Records an answered pull: its latency (apart for live pulls, which may wait), its events
    /// and the store's head.
    func recordPull(store: String, events: UInt64, head: UInt64, live: Bool, duration: Duration) {
        (live ? livePullDuration : pullDuration).recordNanoseconds(SyncMetrics.nanoseconds(duration))
        pulledEvents.increment(by: events)
        recordHead(head, of: store)
    }

    /// Sets the store's head gauge.
    func recordHead(_ head: UInt64, of store: String) {
        CoreMetrics.Gauge(label: Name.storeHead, dimensions: [("store", store)], factory: factory).record(head)
    }

    /// Runs a live pull, counted among the open long-polls while it runs.
    func longPoll<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        openLongPolls.increment()
        defer { openLongPolls.decrement() }
        return try await body()
    }

    /// `duration` in whole nanoseconds.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
