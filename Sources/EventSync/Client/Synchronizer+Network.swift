import Logging
import Synchronization

extension Synchronizer {
    /// The network as the app reports it (see ``NetworkStatus``); ``NetworkStatus/unknown``
    /// until set.
    ///
    /// Automatic sync (``start()``) does not try while it is ``NetworkStatus/offline`` (the
    /// status shows ``SyncStatus/Phase/offline``), and syncs at once when it changes: the
    /// network returned, or an unmetered one can take a held pull. On a
    /// ``NetworkStatus/metered`` network a backlog larger than
    /// ``Configuration/meteredPullLimit`` is not pulled.
    public var networkStatus: NetworkStatus {
        get { network.withLock { $0 } }
        set {
            let changed = network.withLock { status -> Bool in
                defer { status = newValue }
                return status != newValue
            }
            guard changed else { return }
            configuration.logger.debug(
                "network status changed", metadata: ["remote": "\(remoteName)", "network": "\(newValue)"])
            networkChanged.signal()
            listenerNetworkChanged.signal()
            wakeup.signal()
        }
    }

    /// The server events a sync leaves for an unmetered network, or `nil` when it pulls them.
    func heldPull(serverHead: UInt64, pulled: UInt64) -> Int? {
        guard let limit = configuration.meteredPullLimit, networkStatus == .metered else { return nil }
        let backlog = serverHead > pulled ? Int(serverHead - pulled) : 0
        return backlog > max(0, limit) ? backlog : nil
    }
}
