import EventStore
import Synchronization

extension Synchronizer {
    /// Starts automatic sync: after local changes, when other replicas' changes reach the server
    /// (a live pull waits there for them: ``Configuration/livePullWait``), every
    /// ``Configuration/pollInterval``, on ``requestSync()``, and when ``networkStatus``
    /// changes; failures are retried with
    /// exponential backoff and jitter (``Configuration/retry``), announced on ``status`` as
    /// ``SyncStatus/Phase/failed(_:retryAt:)``. While the network is
    /// ``NetworkStatus/offline`` it does not try (``SyncStatus/Phase/offline``). Local commits
    /// refresh the status's pending counts. Calling it again does nothing.
    ///
    /// ```swift
    /// synchronizer.start()
    /// for await status in synchronizer.status { label.text = status.pendingDescription }
    /// ```
    public func start() {
        automatic.withLock { state in
            guard state.task == nil else { return }
            state.failures = 0
            state.task = Task { await self.runAutomatically() }
        }
    }

    /// Stops automatic sync and waits for the running sync, if any, to end.
    public func stop() async {
        let task = automatic.withLock { state -> Task<Void, Never>? in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
    }

    /// Whether automatic sync runs (``start()`` was called and ``stop()`` was not).
    public var isRunningAutomatically: Bool {
        automatic.withLock { $0.task != nil }
    }

    /// Asks automatic sync to run now (no effect unless ``start()`` was called).
    public func requestSync() {
        wakeup.signal()
    }

    private func runAutomatically() async {
        let store = self.store
        let wakeup = self.wakeup
        let key = cursorKey
        // The head is read before the first sync below: a local write committed after it is seen
        // by the watcher, one committed before it is pushed by that sync. (Read inside the task,
        // a write committed between the first sync and the task's start was missed.)
        let head = (try? store.head()) ?? 0
        let watcher = Task {
            do {
                for try await change in store.changes(after: head) {
                    // Only at the newest event committed: a batch of 1,000 events, or a burst of
                    // commits, refreshes the status and wakes the loop once, not per event.
                    guard change.seq >= (try? store.head()) ?? 0 else { continue }
                    if (try? Synchronizer.pendingCount(store: store, key: key)) ?? 0 > 0 {
                        self.refreshPending()
                        wakeup.signal()
                    }
                }
            } catch {}
        }
        defer { watcher.cancel() }
        let listener = configuration.livePullWait.flatMap { wait in
            transport.supportsLivePull ? Task { await self.listenForRemoteChanges(wait: wait) } : nil
        }
        defer { listener?.cancel() }
        while !Task.isCancelled {
            if networkStatus == .offline {
                publish(.offline)
                await networkChanged.wait(timeout: nil)
                continue
            }
            do {
                _ = try await sync()
                await wakeup.wait(timeout: configuration.pollInterval)
            } catch {
                if Task.isCancelled { break }
                // `sync()` announced the failure with its retry time (see `runReportingStatus`).
                if let delay = automatic.withLock({ $0.retryDelay }) {
                    await networkChanged.wait(timeout: delay)
                } else {
                    await wakeup.wait(timeout: configuration.pollInterval)
                }
            }
        }
    }
}
