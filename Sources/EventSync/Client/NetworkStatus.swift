/// The network as the app sees it, handed to ``Synchronizer/networkStatus`` so that automatic
/// sync shows "offline" instead of retrying blindly, syncs the moment the network returns, and
/// can keep large catch-up pulls for an unmetered network
/// (``Synchronizer/Configuration/meteredPullLimit``).
///
/// On Apple platforms, `NWPathMonitor` tells it (see <doc:Sync>):
///
/// ```swift
/// let monitor = NWPathMonitor()
/// monitor.pathUpdateHandler = { path in
///     synchronizer.networkStatus =
///         path.status != .satisfied ? .offline
///         : path.isExpensive || path.isConstrained ? .metered : .unmetered
/// }
/// monitor.start(queue: .main)
/// ```
public enum NetworkStatus: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Nothing was reported: sync runs as on an unmetered network (the default).
    case unknown
    /// No network: automatic sync waits for one (an explicit ``Synchronizer/sync()`` still tries).
    case offline
    /// A network that costs the user (cellular, a personal hotspot, Low Data Mode).
    case metered
    /// A network that does not (Wi-Fi, Ethernet).
    case unmetered

    /// The case's name.
    public var description: String { rawValue }
}
