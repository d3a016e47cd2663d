/// The limits a sync server enforces, reported by ``RemoteInfo/limits`` so that clients size
/// their pages to fit.
///
/// ```swift
/// var limits = SyncLimits()
/// limits.maxPushEvents = 200
/// ```
public struct SyncLimits: Sendable, Hashable {
    /// The most events one push may carry (more: 413).
    public var maxPushEvents: Int = 1000
    /// The most bytes one request body may hold (more: 413).
    public var maxRequestBytes: Int = 8 << 20
    /// The most events one pulled page holds (a larger `limit` is clamped).
    public var maxPageEvents: Int = 1000
    /// The page size when a pull names no `limit`.
    public var defaultPageEvents: Int = 500
    /// A page stops growing once its events take this many bytes of JSON (it always holds at
    /// least one event).
    public var maxPageBytes: Int = 4 << 20

    /// The longest a live pull may ask to wait (`wait`, in seconds): below an HTTP server's
    /// usual idle timeout (30 s), so that a waiting connection is never taken for an idle one. A
    /// server may wait less (its own limit); it never waits longer.
    public static let maxPullWait: Duration = .seconds(25)

    /// Creates the default limits.
    public init() {}
}
