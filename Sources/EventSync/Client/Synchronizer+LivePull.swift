import EventStore

/// Automatic sync's listener: one live pull at a time waits on the server, and new events there
/// start a sync at once (see ``Synchronizer/Configuration/livePullWait``).
extension Synchronizer {
    /// Waits on the server for events after the pulled position and wakes automatic sync when
    /// some arrive (or the server's epoch changed), until the task is cancelled.
    ///
    /// The pull asks for one event and checks nothing: it is only a wake-up, and the sync that
    /// follows pulls and checks what is new. While the network is offline it waits for the
    /// network; before the first sync it waits for one; after a failure it backs off like
    /// automatic sync (``Configuration/retry``). A remote that answers at once with nothing new
    /// does not wait (an older server): the listener then polls every
    /// ``Configuration/pollInterval``, or stops when there is none.
    func listenForRemoteChanges(wait: Duration) async {
        var failures = 0
        while !Task.isCancelled {
            if networkStatus == .offline {
                await listenerNetworkChanged.wait(timeout: nil)
                continue
            }
            guard let cursor = try? cursor(), let epoch = cursor.epoch else {
                await waitForSyncToEnd(status)
                continue
            }
            let started = ContinuousClock.now
            do {
                let page = try await transport.pull(after: cursor.pulled, limit: 1, check: nil, wait: wait)
                failures = 0
                if page.head > cursor.pulled || page.epoch != epoch {
                    let statuses = status  // subscribed before the sync starts
                    wakeup.signal()
                    await waitForSyncToEnd(statuses)
                } else if ContinuousClock.now - started < wait / 2 {
                    guard let poll = configuration.pollInterval else { return }
                    try? await Task.sleep(for: poll)
                }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                await listenerNetworkChanged.wait(
                    timeout: configuration.retry.delay(afterFailures: failures, random: Double.random(in: 0..<1)))
            }
        }
    }

    /// Waits until `statuses` (a fresh subscription: its first element is the current status)
    /// shows a sync that ended — up to date, failed, held or offline — at most a minute.
    private func waitForSyncToEnd(_ statuses: AsyncStream<SyncStatus>) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var first = true
                for await status in statuses {
                    if first {
                        first = false
                        continue
                    }
                    switch status.phase {
                    case .pushing, .pulling, .idle: continue
                    case .upToDate, .failed, .offline, .pullHeld: return
                    }
                }
            }
            group.addTask { try? await Task.sleep(for: .seconds(60)) }
            await group.next()
            group.cancelAll()
        }
    }
}
